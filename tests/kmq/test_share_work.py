"""Share queues under real work: slow workers, other producers' batches,
mixed speeds, many consumers, a worker killed while holding records.

Each consumer acquires only what it polls for, so a slow worker's messages
are worked once, never dead-lettered for deliveries it was not handed, and
the backlog spreads over every consumer.
"""

import dataclasses
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Producer

from kmqadmin.kafka.client.config import producer_config
from kmqadmin.kmq import Message, QueueClient, QueueConfig
from tests.kafka_helpers import read_all
from tests.kmq.test_crashes import spawn
from tests.process import kill9, wait_for
from tests.queue_helpers import send


@dataclasses.dataclass
class Worked:
    """What every consumer was handed: (consumer, value, delivery count)."""

    deliveries: list[tuple[int, bytes, int]] = dataclasses.field(default_factory=list)
    acked: list[bytes] = dataclasses.field(default_factory=list)
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    def per_consumer(self) -> Counter:
        return Counter(c for c, _, _ in self.deliveries)


def run_consumers(
    queue: QueueConfig,
    n_messages: int,
    work_s: list[float],
    poll: int,
    settle: Callable[[QueueClient, Message], None] | None = None,
    timeout: float = 120,
) -> Worked:
    """One thread and client per entry of ``work_s`` (its seconds per
    message), until ``n_messages`` distinct values are acked."""
    worked, stop = Worked(), threading.Event()

    def consume(i: int) -> None:
        with QueueClient(queue) as client:
            while not stop.is_set():
                for m in client.poll(poll, 0.2):
                    with worked.lock:
                        worked.deliveries.append((i, m.value, m.delivery_count))
                    time.sleep(work_s[i])  # the work itself
                    if settle is None or settle(client, m) is None:
                        client.ack(m)
                        with worked.lock:
                            worked.acked.append(m.value)

    threads = [threading.Thread(target=consume, args=(i,)) for i in range(len(work_s))]
    for t in threads:
        t.start()
    try:
        wait_for(lambda: len(set(worked.acked)) >= n_messages, timeout, "every message acked")
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    return worked


def plain_producer_batch(queue: QueueConfig, n: int) -> None:
    """n records in one producer batch, lz4-compressed, as a Java service
    with linger and compression writes them: no kmq headers at all."""
    producer = Producer(
        producer_config(
            queue.bootstrap_servers,
            extra={"linger.ms": 1000, "batch.num.messages": 100_000, "compression.type": "lz4"},
        )
    )
    for i in range(n):
        producer.produce(queue.topic, value=f"m{i}".encode(), partition=0)
    assert producer.flush(30) == 0


def letters(queue: QueueConfig) -> list:
    return read_all(queue, queue.dlq_topic, partitions=1)


@pytest.fixture
def slow_queue(share_queue: QueueConfig) -> QueueConfig:
    return dataclasses.replace(share_queue, message_timeout_ms=5000, max_redeliveries=3)


@pytest.mark.parametrize("producer", ["ours", "plain"])
def test_slow_work_is_done_once_and_never_dead_lettered(
    slow_queue: QueueConfig, producer: str
) -> None:
    """The issue's scenario: 60 messages, 3 consumers polling 5 at a time,
    0.3 s of work each; every message is handed out once."""
    if producer == "ours":
        send(slow_queue, 60)
    else:
        plain_producer_batch(slow_queue, 60)
    worked = run_consumers(slow_queue, 60, [0.3, 0.3, 0.3], poll=5)
    values = Counter(v for _, v, _ in worked.deliveries)
    assert values == Counter({f"m{i}".encode(): 1 for i in range(60)})
    assert {count for _, _, count in worked.deliveries} == {1}
    assert all(n > 0 for n in worked.per_consumer().values()), worked.per_consumer()
    assert letters(slow_queue) == []


def test_fast_and_slow_consumers_share_without_duplicates(slow_queue: QueueConfig) -> None:
    """One consumer 50x slower than the other: the fast one takes most of
    the backlog, the slow one holds no more than it asked for."""
    plain_producer_batch(slow_queue, 200)
    worked = run_consumers(slow_queue, 200, [0.002, 0.1], poll=5)
    assert Counter(v for _, v, _ in worked.deliveries) == Counter(
        {f"m{i}".encode(): 1 for i in range(200)}
    )
    per = worked.per_consumer()
    assert per[0] > per[1] > 0, per
    assert letters(slow_queue) == []


def test_a_backlog_spreads_over_every_consumer(share_queue: QueueConfig) -> None:
    """600 messages, 3 fast consumers polling 10: each takes a share."""
    plain_producer_batch(share_queue, 600)
    worked = run_consumers(share_queue, 600, [0.001, 0.001, 0.001], poll=10)
    per = worked.per_consumer()
    assert len(worked.deliveries) == 600
    assert min(per[i] for i in range(3)) >= 60, per


def test_many_consumers_with_releases_lose_nothing_and_work_nothing_twice(
    share_queue: QueueConfig,
) -> None:
    """3 consumers x 2,000 messages, 10 % released on their first delivery:
    each message is acked once; the only second deliveries are the releases."""
    queue = dataclasses.replace(share_queue, message_timeout_ms=10_000)
    n = 6000
    released: list[bytes] = []

    def settle(client: QueueClient, m: Message) -> bool | None:
        if m.delivery_count == 1 and int(m.value[1:]) % 10 == 0:
            client.release(m)
            released.append(m.value)
            return True
        return None

    producer = Producer(producer_config(queue.bootstrap_servers, extra={"linger.ms": 50}))
    for i in range(n):
        producer.produce(queue.topic, value=f"m{i}".encode(), partition=0)
    assert producer.flush(30) == 0
    worked = run_consumers(queue, n, [0, 0, 0], poll=50, settle=settle)
    assert Counter(worked.acked) == Counter({f"m{i}".encode(): 1 for i in range(n)})
    assert sorted(released) == sorted(f"m{i}".encode() for i in range(0, n, 10))
    assert len(worked.deliveries) == n + len(released)
    assert letters(queue) == []


def test_a_killed_worker_holds_only_its_poll_and_that_comes_back_once(
    slow_queue: QueueConfig, tmp_path: Path
) -> None:
    """A worker polling 5 with 0.3 s of work is killed mid-batch: exactly
    its 5 come back, each with one more delivery; the other 15 are
    delivered once."""
    send(slow_queue, 20)
    log = tmp_path / "processed"
    worker = spawn("run_worker", slow_queue, str(log), "0.3", "5")
    wait_for(lambda: log.exists() and len(log.read_bytes().split()) >= 2, 30, "work started")
    kill9(worker)
    counts: dict[bytes, int] = {}
    with QueueClient(slow_queue) as client:

        def drained() -> bool:
            for m in client.poll(20, 0.2):
                counts[m.value] = m.delivery_count
                client.ack(m)
            return len(counts) == 20

        wait_for(drained, 60, "every message delivered", every=0)
    again = {v for v, c in counts.items() if c > 1}
    assert again == {f"m{i}".encode() for i in range(5)}, counts
    assert {counts[v] for v in again} == {2}
    assert letters(slow_queue) == []
