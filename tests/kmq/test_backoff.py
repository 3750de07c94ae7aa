"""Delayed retries: with a backoff, copies travel through the scheduler."""

import dataclasses
import itertools
import time

import pytest

from kmqadmin.kmq import Backoff, QueueClient, QueueConfig, RedeliveryTracker
from kmqadmin.kmq import headers as h
from kmqadmin.scheduler import Scheduler, wire
from kmqadmin.scheduler.scheduler import BARRIER_KEY
from tests.kafka_helpers import read_all
from tests.process import wait_for
from tests.queue_helpers import dlq, send


def test_backoff_grows_exponentially_up_to_its_cap() -> None:
    backoff = Backoff(initial_ms=100, multiplier=3, max_ms=1000)
    assert [backoff.delay_ms(n) for n in (1, 2, 3, 4, 10_000)] == [100, 300, 900, 1000, 1000]


def test_a_gentle_backoff_is_not_capped_early() -> None:
    backoff = Backoff(initial_ms=1000, multiplier=1.01, max_ms=10_000)
    assert backoff.delay_ms(100) == round(1000 * 1.01**99)  # 2,678 ms, under the cap
    assert Backoff(initial_ms=5, multiplier=1, max_ms=5).delay_ms(10**9) == 5


@pytest.mark.parametrize("kwargs", [{"initial_ms": 0}, {"max_ms": 1}, {"multiplier": 0.5}])
def test_a_nonsensical_backoff_is_refused(kwargs: dict) -> None:
    with pytest.raises(ValueError, match="backoff"):
        Backoff(**kwargs)


def test_a_queues_own_schedules_topic_fires_into_the_queue_alone() -> None:
    """Derived, not registered: its allowlist is the queue topic itself."""
    config = QueueConfig(bootstrap_servers="b:9092", topic="orders", group_id="g")
    scheduler = config.scheduler_config()
    assert scheduler.allows("orders")
    assert not scheduler.allows("orders__undelivered") and not scheduler.allows("payments")


def test_redeliveries_wait_for_the_backoff_then_go_to_the_dlq(queue: QueueConfig) -> None:
    """Timeout 0.5 s, backoff 1 s then 2 s, two redeliveries: deliveries come at
    about 0, 1.5 and 4 s, then the DLQ; every copy keeps its headers."""
    queue = dataclasses.replace(
        queue,
        message_timeout_ms=500,
        max_redeliveries=2,
        backoff=Backoff(initial_ms=1000, multiplier=2, max_ms=10_000),
    )
    assert queue.ensure_topics(partitions=3) == [queue.schedules_topic]
    tracker, scheduler = RedeliveryTracker(queue), Scheduler(queue.scheduler_config())
    tracker.start()
    scheduler.start()
    try:
        send(queue, 1, headers={"trace": b"abc"})
        seen: list[tuple[float, int]] = []
        with QueueClient(queue) as client:

            def received_all() -> bool:
                for m in client.poll(10, 0.1):  # never acked
                    seen.append((time.monotonic(), m.delivery_count))
                    assert m.key == b"k0" and m.value == b"m0"
                    assert h.find(m.headers, "trace") == b"abc"
                return len(seen) == 3 and len(dlq(queue)) == 1

            wait_for(received_all, 60, "three deliveries and a dead letter", every=0)
    finally:
        tracker.stop()
        scheduler.stop()
    assert [count for _, count in seen] == [1, 2, 3]
    # The tracker scheduled each copy the backoff after it redelivered: 1 s, then 2 s.
    retries = [r for r in read_all(queue, queue.schedules_topic) if r.value() is not None]
    retries = [r for r in retries if r.key() != BARRIER_KEY]
    delays = [wire.deadline(r.headers()) - r.timestamp()[1] for r in retries]
    assert [round(d, -2) for d in sorted(delays)] == [1000, 2000], delays
    # No copy came sooner than the 0.5 s timeout plus its backoff. (How much
    # later depends on the machine: start-up, a cold first read-back.)
    gaps = [b - a for (a, _), (b, _) in itertools.pairwise(seen)]
    assert gaps[0] >= 1.45 and gaps[1] >= 2.45, gaps
    (dead,) = dlq(queue)
    assert h.find(dead.headers(), h.DLQ_REASON) == b"max-redeliveries"
    assert h.find(dead.headers(), "trace") == b"abc"
    assert scheduler.stats().fired == 2
