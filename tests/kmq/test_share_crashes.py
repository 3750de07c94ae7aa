"""Share queues under kill -9: records a dead worker held come back after
their lock, nothing is lost, and a DLQ move is at-least-once."""

import dataclasses
import random
from collections import Counter
from pathlib import Path

from kmqadmin.kmq import QueueClient, QueueConfig
from kmqadmin.kmq import headers as h
from tests.kafka_helpers import read_all
from tests.kmq.test_crashes import spawn
from tests.process import kill9, wait_for
from tests.queue_helpers import send


def kill_workers(
    module: str, queue: QueueConfig, log: Path, kills: int, seed: int, *args: str
) -> None:
    """Kill each worker once it has noted a random 5 to 60 messages: mid-way
    through a poll of 100, so it dies holding records it has not acked."""
    rng = random.Random(seed)
    for _ in range(kills):
        target = noted(log) + rng.randint(5, 60)
        worker = spawn(module, queue, str(log), *args)
        wait_for(lambda t=target: noted(log) >= t, 60, "the worker to work", every=0.005)
        kill9(worker)


def noted(log: Path) -> int:
    return log.read_bytes().count(b"\n") if log.exists() else 0


def test_kill_9_worker_holding_records_loses_nothing(
    share_queue: QueueConfig, tmp_path: Path
) -> None:
    share_queue = dataclasses.replace(share_queue, max_redeliveries=3)  # three kills
    n = 5000  # at 10 ms of work each, more than the workers get through
    send(share_queue, n)
    log = tmp_path / "processed"
    kill_workers("run_worker", share_queue, log, 3, 3, "0.01")
    noted = log.read_bytes().split()
    processed = set(noted)
    redelivered = len(noted) - len(processed)  # handed out again after a kill
    with QueueClient(share_queue) as client:

        def drained() -> bool:
            nonlocal redelivered
            for m in client.poll(500, 0.2):
                processed.add(m.value)
                redelivered += m.delivery_count > 1
                client.ack(m)
            return len(processed) == n

        wait_for(drained, 120, "every message processed", every=0)
    assert processed == {f"m{i}".encode() for i in range(n)}
    assert redelivered > 0, (len(noted), len(processed))  # what the dead workers held came back
    assert read_all(share_queue, share_queue.dlq_topic, partitions=1) == []


def test_kill_9_worker_mid_dlq_moves_loses_no_letter(
    share_queue: QueueConfig, tmp_path: Path
) -> None:
    """Killed between writing a letter and its ACCEPT, a worker leaves the
    record to come back and be dead-lettered again: a duplicate letter with
    the same kmq-id, never a lost one."""
    share_queue = dataclasses.replace(share_queue, max_redeliveries=3)  # three kills
    n = 5000
    send(share_queue, n)
    log = tmp_path / "processed"
    kill_workers("run_rejecting_worker", share_queue, log, kills=3, seed=5)
    poison = {f"m{i}".encode() for i in range(0, n, 10)}
    acked: set[bytes] = set()
    with QueueClient(share_queue) as client:

        def drained() -> bool:
            for m in client.poll(500, 0.2):
                if m.value in poison:
                    client.reject(m, reason="poison")
                else:
                    client.ack(m)
                    acked.add(m.value)
            return len(acked | set(log.read_bytes().split()) - poison) == n - len(poison)

        wait_for(drained, 120, "every good message processed", every=0)
        client.flush()
    letters = read_all(share_queue, share_queue.dlq_topic, partitions=1)
    dead = Counter(r.value() for r in letters)
    assert set(dead) == poison
    ids = {(r.value(), h.find(r.headers(), h.MESSAGE_ID)) for r in letters}
    assert len(ids) == len(poison)  # a duplicate letter names the same message
    assert {h.find(r.headers(), h.DLQ_REASON) for r in letters} == {b"rejected"}
