"""The tracker loading a million open deliveries: how fast it reads their
markers against a plain read of the same topic, the memory each costs, and
a restart that redelivers none falsely (kmq_throughput.py's "tracker")."""

import time
import uuid
from collections.abc import Callable

from confluent_kafka import Consumer, Producer, TopicPartition

from bench.common import rss_bytes
from bench.kmq_core.filled_queues import PARTITIONS, new_queue
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kafka.client.config import consumer_config, producer_config
from kmqadmin.kmq import RedeliveryTracker, markers

# The poll batch the compact format's open deliveries are written in.
COMPACT_BATCH = 500


def timed(fn: Callable[[], int]) -> float:
    """Messages per second of ``fn``, which returns how many it handled."""
    started = time.perf_counter()
    count = fn()
    return count / (time.perf_counter() - started)


def write_markers(bootstrap: str, topic: str, entries: list[tuple[int, int, bytes]]) -> None:
    producer = Producer(
        producer_config(bootstrap, extra={"linger.ms": 50, "batch.size": 1_000_000})
    )
    for partition, offset, value in entries:
        while True:
            try:
                producer.produce(
                    topic,
                    key=markers.encode_key(partition, offset),
                    value=value,
                    partition=partition,
                )
                break
            except BufferError:
                producer.poll(0.05)
    producer.flush()


def plain_read_rate(bootstrap: str, topic: str, n: int) -> float:
    def read() -> int:
        consumer = Consumer(consumer_config(bootstrap, f"r-{uuid.uuid4().hex}"))
        consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        seen = 0
        while seen < n:
            seen += len(consumer.consume(2000, 1.0))
        consumer.close()
        return seen

    return timed(read)


def wait_loaded(tracker: RedeliveryTracker, in_flight: int, timeout: float = 600) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        stats = tracker.stats()
        if stats.in_flight == in_flight and len(stats.partitions) == PARTITIONS:
            return time.perf_counter() - started
        time.sleep(0.02)
    raise TimeoutError(f"tracker held {tracker.stats().in_flight} of {in_flight}")


def open_markers(bootstrap: str, n_open: int, marker_format: str) -> dict:
    """1M open deliveries, plus acked ones whose deadlines passed long ago and
    whose end markers come after every start: a tracker that redelivers before
    it has read to the end redelivers those falsely (kmq issue #158). In the
    compact format the starts and ends are ranges of a poll batch (500)."""
    config = new_queue(bootstrap, message_timeout_ms=600_000, marker_format=marker_format)
    far, past = now_ms() + 3_600_000, 1
    acked = n_open // 10
    per, acked_per = (n_open + acked) // PARTITIONS, acked // PARTITIONS
    step = 1 if marker_format == "kmq" else COMPACT_BATCH
    starts = [
        (p, first, _start(deadline, first, last))
        for p in range(PARTITIONS)
        for low, high, deadline in ((0, acked_per, past), (acked_per, per, far))
        for first, last in _chunks(low, high, step)
    ]
    ends = [
        (p, first, markers.END if last == first else markers.end_range(last))
        for p in range(PARTITIONS)
        for first, last in _chunks(0, acked_per, step)
    ]
    write_markers(bootstrap, config.markers_topic, starts + ends)
    total = len(starts) + len(ends)
    expected_open = PARTITIONS * (per - acked_per)
    plain = plain_read_rate(bootstrap, config.markers_topic, total)

    rss_before = rss_bytes()
    first = RedeliveryTracker(config, commit_interval=0.2)
    first.start()
    load = wait_loaded(first, expected_open)
    stats = first.stats()
    rss_after = rss_bytes()
    packed = sum(s.open.memory_bytes() for s in first._states.values())
    first.stop()

    second = RedeliveryTracker(config, commit_interval=0.2)
    second.start()
    recovery = wait_loaded(second, expected_open)
    time.sleep(1.0)  # give a false redelivery the chance to happen before counting
    after = second.stats()
    second.stop()
    return {
        "marker_format": marker_format,
        "open_deliveries": expected_open,
        "markers_read": total,
        "tracker_markers_per_s": round(total / load),
        "plain_read_markers_per_s": round(plain),
        "tracker_vs_plain_read": round(total / load / plain, 3),
        "packed_bytes_per_in_flight": round(packed / expected_open, 1),
        "rss_bytes_per_in_flight": round((rss_after - rss_before) / expected_open, 1),
        "restart_recovery_s": round(recovery, 2),
        "false_redeliveries_after_restart": after.redelivered + after.dead_lettered + after.skipped,
        "first_tracker_redelivered": stats.redelivered,
    }


def _chunks(low: int, high: int, step: int) -> list[tuple[int, int]]:
    """[low, high) as (first, last) runs of ``step`` offsets, as poll batches."""
    return [(first, min(first + step, high) - 1) for first in range(low, high, step)]


def _start(timeout_or_deadline: int, first: int, last: int) -> bytes:
    if last == first:
        return markers.start(timeout_or_deadline)
    return markers.start_range(timeout_or_deadline, last)
