"""Promises under kill -9: nothing lost, and a crashed tracker duplicates nothing."""

import dataclasses
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from kmqadmin.kafka.embedded import EmbeddedBroker
from kmqadmin.kmq import QueueClient, QueueConfig, QueueProducer, RedeliveryTracker
from kmqadmin.kmq import headers as h
from tests.kmq.conftest import read_all
from tests.kmq.test_queue import poll_until, send
from tests.process import ROOT, kill9, wait_for


def spawn(module: str, queue: QueueConfig, *args: str, log: Path | None = None) -> subprocess.Popen:
    """``log`` collects the process's stderr (appended), to tell why it stalled."""
    config = {k: v for k, v in dataclasses.asdict(queue).items() if k != "kafka_config"}
    with open(log or os.devnull, "ab") as stderr:
        return subprocess.Popen(
            [sys.executable, "-m", f"tests.kmq.{module}", json.dumps(config), *args],
            cwd=ROOT,
            stderr=stderr if log else None,
        )


def test_kill_9_worker_between_commit_and_ack_loses_nothing(
    queue: QueueConfig, tracker: RedeliveryTracker, tmp_path: Path
) -> None:
    n = 3000
    send(queue, n)
    log = tmp_path / "processed"
    rng = random.Random(3)
    for _ in range(4):
        worker = spawn("run_worker", queue, str(log))
        wait_for(lambda: log.exists() and log.stat().st_size > 0, 30, "the worker to start")
        time.sleep(rng.uniform(0.5, 2.0))  # a random point in its work, not a wait
        kill9(worker)
    processed = set(log.read_bytes().split())
    with QueueClient(queue) as client:

        def drained() -> bool:
            for m in client.poll(500, 0.2):
                processed.add(m.value)
                client.ack(m)
            return len(processed) == n and tracker.stats().in_flight == 0

        wait_for(drained, 120, "every message processed", every=0)
    assert processed == {f"m{i}".encode() for i in range(n)}
    assert read_all(queue, queue.dlq_topic) == []


def test_kill_9_tracker_mid_redelivery_loses_and_duplicates_nothing(
    queue: QueueConfig, tmp_path: Path
) -> None:
    """Waves of messages keep redeliveries going while the tracker is killed at
    random points, five times; workers drop every first delivery."""
    queue = dataclasses.replace(queue, max_redeliveries=50)
    waves, per_wave = 40, 100
    producer = QueueProducer(queue)
    rng = random.Random(5)
    acked: set[bytes] = set()
    sent = kills = 0
    log = tmp_path / "tracker.log"
    tracker = spawn("run_tracker", queue, log=log)
    next_kill = time.monotonic() + rng.uniform(4, 7)
    try:
        with QueueClient(queue) as client:

            def all_acked() -> bool:
                nonlocal tracker, next_kill, kills, sent
                if sent < waves * per_wave:
                    for i in range(sent, sent + per_wave):
                        producer.send(value=f"m{i}".encode())
                    producer.flush()
                    sent += per_wave
                for m in client.poll(500, 0.5):
                    if m.delivery_count >= 2:  # drop every first delivery
                        client.ack(m)
                        acked.add(m.value)
                if kills < 5 and time.monotonic() >= next_kill:
                    kill9(tracker)
                    kills += 1
                    tracker = spawn("run_tracker", queue, log=log)
                    next_kill = time.monotonic() + rng.uniform(4, 9)
                return len(acked) == waves * per_wave

            try:
                wait_for(all_acked, 200, "every message redelivered and acked", every=0)
            except AssertionError as exc:
                raise AssertionError(
                    f"{exc}: {waves * per_wave - len(acked)} of {sent} not acked after "
                    f"{kills} kills; tracker exit code {tracker.poll()}; its log ends:\n"
                    + "\n".join(log.read_text(errors="replace").splitlines()[-30:])
                ) from exc
    finally:
        kill9(tracker)
    assert kills == 5
    copies = Counter(
        (h.find(r.headers(), h.MESSAGE_ID), h.find(r.headers(), h.REDELIVERY_COUNT))
        for r in read_all(queue, queue.topic)
        if h.find(r.headers(), h.REDELIVERY_COUNT)
    )
    assert {copy: n for copy, n in copies.items() if n > 1} == {}


def test_two_trackers_one_stopped_mid_run_nothing_lost(queue: QueueConfig) -> None:
    """Half the messages are sent while both trackers run, half after one stopped:
    the second half's partitions can only be redelivered by a takeover."""
    n = 1500
    first, second = RedeliveryTracker(queue), RedeliveryTracker(queue)
    first.start()
    second.start()
    acked: set[bytes] = set()
    try:
        wait_for(
            lambda: len(first.stats().partitions) + len(second.stats().partitions) == 3,
            30,
            "both trackers to share the partitions",
        )
        assert first.stats().partitions and second.stats().partitions
        with QueueClient(queue) as client:

            def acked_at_least(count: int) -> bool:
                for m in client.poll(500, 0.2):
                    if m.delivery_count >= 2:  # drop every first delivery
                        client.ack(m)
                        acked.add(m.value)
                return len(acked) >= count

            send(queue, n // 2)
            wait_for(lambda: acked_at_least(n // 4), 60, "redeliveries by both", every=0)
            first.stop()
            producer = QueueProducer(queue)
            for i in range(n // 2, n):
                producer.send(value=f"m{i}".encode())
            producer.flush()
            wait_for(lambda: acked_at_least(n), 120, "every message acked", every=0)
        assert second.stats().partitions == (0, 1, 2)
        assert acked == {f"m{i}".encode() for i in range(n)}
    finally:
        first.stop()
        second.stop()


def test_tracker_started_before_its_topics_recovers_once_they_exist(
    kafka: EmbeddedBroker, topic: str
) -> None:
    """A tracker whose topics are missing keeps retrying instead of dying, and
    redelivers once they are created."""
    queue = QueueConfig(
        bootstrap_servers=kafka.bootstrap_servers,
        topic=topic,
        group_id=f"{topic}-workers",
        message_timeout_ms=500,
    )
    tracker = RedeliveryTracker(queue)
    tracker.start()
    try:
        wait_for(lambda: tracker.restarts >= 1, 30, "the tracker to crash and restart")
        queue.ensure_topics(partitions=3)
        send(queue, 10)
        with QueueClient(queue) as client:
            first = poll_until(client, 10)
            assert {m.delivery_count for m in first} == {1}
            again = poll_until(client, 10, timeout=60)  # none acked: all come back
        assert {m.value for m in again} == {m.value for m in first}
        assert {m.delivery_count for m in again} == {2}
    finally:
        tracker.stop()
