"""Slow work on one partition: bench/queues.py's slow-work section.

C consumers (threads: the work is a sleep, so the GIL is not what is
measured) each poll 5 and spend WORK_MS per message before acking it, on a
queue whose lock (message timeout) is LOCK_MS. The records come from a plain
producer in one big lz4 batch, as a Java service with linger writes them.
For each system: messages/s against the ideal (consumers / work time),
deliveries beyond one per message (duplicates), and messages never acked
by the end (dead-lettered, or archived by the broker for the bare consumer).
The consumers join first; the clock starts when the records are written.
"""

import time
import uuid
from collections import Counter
from dataclasses import dataclass
from threading import Event, Lock, Thread

from confluent_kafka import ConsumerGroupState, Producer

from bench.common import read_topic
from bench.queue_systems import KMQ_EACH, SHARE_CONSUMER, SHARE_EACH, Target, open_system
from kmqadmin.kafka.admin import share_group_configs as share_group
from kmqadmin.kafka.admin.share_groups import ShareGroupAdmin
from kmqadmin.kafka.admin.topics import admin_client, ensure_topics
from kmqadmin.kafka.client.config import producer_config
from kmqadmin.kmq import QueueConfig, RedeliveryTracker

SYSTEMS = (KMQ_EACH, SHARE_EACH, SHARE_CONSUMER)
POLL = 5
MAX_REDELIVERIES = 3
JOIN_TIMEOUT_S = 60


@dataclass(frozen=True)
class Case:
    work_ms: int
    consumers: int
    lock_ms: int
    messages: int

    @property
    def ideal_msgs_per_s(self) -> float:
        return self.consumers * 1000 / self.work_ms


CASES = (Case(300, 3, 5000, 60), Case(100, 4, 2000, 200), Case(50, 8, 2000, 400))
QUICK = (Case(50, 2, 2000, 20),)  # --quick: one small case


def run(bootstrap: str, cases: tuple[Case, ...] = CASES) -> list[dict]:
    return [
        {
            "work_ms": case.work_ms,
            "consumers": case.consumers,
            "lock_ms": case.lock_ms,
            "messages": case.messages,
            "ideal_msgs_per_s": round(case.ideal_msgs_per_s, 1),
            "systems": {system: one(bootstrap, system, case) for system in SYSTEMS},
        }
        for case in cases
    ]


def one(bootstrap: str, system: str, case: Case) -> dict:
    name = f"slow-{uuid.uuid4().hex[:8]}"
    backend = "kmq" if system == KMQ_EACH else "share"
    queue = QueueConfig(
        bootstrap,
        name,
        f"{name}-g",
        message_timeout_ms=case.lock_ms,
        max_redeliveries=MAX_REDELIVERIES,
        backend=backend,
    )
    if system == SHARE_CONSUMER:
        ensure_topics(bootstrap, {name: 1})
        share_group.configure(queue)
    else:
        queue.ensure_topics(partitions=1)
    tracker = RedeliveryTracker(queue) if backend == "kmq" else None
    if tracker:
        tracker.start()
    try:
        return _measure(Target(bootstrap, name, queue.group_id, queue), system, case)
    finally:
        if tracker:
            tracker.stop()


def _fill(bootstrap: str, topic: str, n: int) -> None:
    producer = Producer(
        producer_config(
            bootstrap,
            extra={"linger.ms": 500, "batch.num.messages": 100_000, "compression.type": "lz4"},
        )
    )
    for i in range(n):
        producer.produce(topic, f"m{i}".encode(), partition=0)
    assert producer.flush(30) == 0


def _wait_joined(target: Target, system: str, consumers: int) -> None:
    """Until every consumer is a member with its assignment: the clock
    starts when the records are written, after that."""
    deadline = time.monotonic() + JOIN_TIMEOUT_S
    if system == KMQ_EACH:
        admin = admin_client(target.bootstrap_servers)

        def joined() -> bool:
            found = admin.describe_consumer_groups([target.group_id])[target.group_id].result(10)
            return found.state == ConsumerGroupState.STABLE and len(found.members) == consumers
    else:
        shares = ShareGroupAdmin(target.bootstrap_servers)

        def joined() -> bool:
            members = shares.describe(target.group_id).members
            return len(members) == consumers and all(m.assignment for m in members)

    while not joined():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{system}: {consumers} consumers not joined")
        time.sleep(0.1)


def _measure(target: Target, system: str, case: Case) -> dict:
    deliveries: Counter[bytes] = Counter()
    acked: set[bytes] = set()
    lock, stop = Lock(), Event()
    work_s = case.work_ms / 1000

    def consume() -> None:
        consumer = open_system(system, target)
        try:
            while not stop.is_set():
                try:
                    records = consumer.poll(POLL, 0.2)
                except Exception:  # refused acks reported late: those come back
                    continue
                for record in records:
                    value = record.value if system != SHARE_CONSUMER else record.value()
                    with lock:
                        deliveries[value] += 1
                    time.sleep(work_s)
                    try:
                        consumer.ack([record], [])
                    except Exception:  # a refused ack: the message comes back
                        continue
                    with lock:
                        acked.add(value)
        finally:
            consumer.close()

    threads = [Thread(target=consume) for _ in range(case.consumers)]
    for t in threads:
        t.start()
    _wait_joined(target, system, case.consumers)
    _fill(target.bootstrap_servers, target.topic, case.messages)
    started = time.monotonic()
    limit = started + 4 * case.messages / case.ideal_msgs_per_s + 30
    while len(acked) < case.messages and time.monotonic() < limit:
        time.sleep(0.05)
    elapsed = time.monotonic() - started
    stop.set()
    for t in threads:
        t.join(60)
    letters = 0
    if system != SHARE_CONSUMER:
        letters = len(read_topic(target.bootstrap_servers, target.queue.dlq_topic, 1))
    rate = len(acked) / elapsed
    return {
        "msgs_per_s": round(rate, 1),
        "vs_ideal": round(rate / case.ideal_msgs_per_s, 3),
        "duplicates": sum(deliveries.values()) - len(deliveries),
        "not_acked": case.messages - len(acked),
        "dead_letters": letters,
    }
