"""Queue-core benchmark; prints one JSON document.

    .venv/bin/python bench/kmq_throughput.py [--messages 200000] [--repeats 3] [--open 1000000]

Every figure that has a plain confluent-kafka equivalent is measured against
it in the same run, on the same embedded broker, so results read as ratios.
"""

import argparse
import json
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer, Producer

from bench.common import end_offsets, read_topic, report
from bench.kmq_core.filled_queues import PARTITIONS, filled_queue
from bench.kmq_core.redelivery_accuracy import redelivery_accuracy
from bench.kmq_core.tracker_load import open_markers
from kmqadmin.kafka.client.config import consumer_config, producer_config
from kmqadmin.kmq import QueueClient, QueueConfig, RedeliveryTracker, markers
from kmqadmin.kmq.config import MARKER_FORMATS


def rate_after_first(poll: Callable[[], int], n: int) -> float:
    """Messages per second from the first message on: the seconds a group join
    takes are the broker's, the same for both paths, and not throughput."""
    seen = poll()
    while not seen:
        seen = poll()
    started = time.perf_counter()
    while seen < n:
        seen += poll()
    return (n - 1) / (time.perf_counter() - started)


def plain_consume(config: QueueConfig, n: int) -> float:
    """A plain group consumer committing per batch: the baseline."""
    consumer = Consumer(consumer_config(config.bootstrap_servers, f"plain-{uuid.uuid4().hex}"))
    consumer.subscribe([config.topic])

    def poll() -> int:
        batch = [m for m in consumer.consume(500, 1.0) if m.error() is None]
        if batch:
            consumer.commit(asynchronous=True)
        return len(batch)

    rate = rate_after_first(poll, n)
    consumer.close()
    return rate


def io_floor_consume(config: QueueConfig, n: int, batch: int, batch_ends: bool = False) -> float:
    """The Kafka calls the kmq path cannot avoid, made with no kmq code around
    them: consume, start markers (one produce_batch per partition), wait for
    them, commit, an end marker per message (with ``batch_ends``, one
    produce_batch per partition, as ack_all writes them). The ceiling for
    any client of this design in Python."""
    bootstrap = config.bootstrap_servers
    consumer = Consumer(consumer_config(bootstrap, f"floor-{uuid.uuid4().hex}"))
    consumer.subscribe([config.topic])
    producer = Producer(producer_config(bootstrap, extra={"delivery.report.only.error": True}))
    start, topic, pack = markers.start(0), config.markers_topic, markers.KEY.pack

    def poll() -> int:
        records = consumer.consume(batch, 1.0)
        starts: dict[int, list[dict]] = {}
        for r in records:
            starts.setdefault(r.partition(), []).append(
                {"value": start, "key": pack(r.partition(), r.offset())}
            )
        for partition, batch_ in starts.items():
            producer.produce_batch(topic, batch_, partition)
        producer.flush(30)
        if records:
            consumer.commit(asynchronous=False)
        if batch_ends:
            ends: dict[int, list[dict]] = {}
            for r in records:
                ends.setdefault(r.partition(), []).append(
                    {"value": markers.END, "key": pack(r.partition(), r.offset())}
                )
            for partition, batch_ in ends.items():
                producer.produce_batch(topic, batch_, partition)
        else:
            for r in records:
                producer.produce(topic, markers.END, pack(r.partition(), r.offset()), r.partition())
        return len(records)

    rate = rate_after_first(poll, n)
    consumer.close()
    return rate


def kmq_consume(config: QueueConfig, n: int, batch: int, each: bool = True) -> float:
    """Our client: a poll, then an ack() per message, or (``each`` false) one
    ack_all() per batch."""
    with QueueClient(config) as client:

        def poll() -> int:
            batch_ = client.poll(batch, 1.0)
            if each:
                for message in batch_:
                    client.ack(message)
            else:
                client.ack_all(batch_)
            return len(batch_)

        return rate_after_first(poll, n)


def tracker_digest(config: QueueConfig, n: int) -> float:
    """Messages per second a tracker digests the client's markers at, timed
    from its assignment until it has read every marker the client wrote."""
    ends = end_offsets(config.bootstrap_servers, config.markers_topic, PARTITIONS)
    tracker = RedeliveryTracker(config)
    tracker.start()
    try:
        deadline = time.monotonic() + 120
        while len(tracker.stats().partitions) < PARTITIONS:
            if time.monotonic() > deadline:
                raise TimeoutError("the tracker was not assigned every markers partition")
            time.sleep(0.005)
        started = time.perf_counter()
        while any(s.next_offset < ends[p] for p, s in list(tracker._states.items())):
            if time.monotonic() > deadline:
                raise TimeoutError("the tracker did not read the client's markers")
            time.sleep(0.005)
        return n / (time.perf_counter() - started)
    finally:
        tracker.stop()


def median_rate(measure: Callable[[], float], repeats: int) -> dict:
    """The median of ``repeats`` runs, with the spread: on 2 cores one run
    of a few hundred milliseconds swings by a quarter either way."""
    rates = sorted(measure() for _ in range(repeats))
    return {"median": statistics.median(rates), "min": rates[0], "max": rates[-1]}


def throughput(
    bootstrap: str, n: int, size: int, batch: int, repeats: int, settle_s: float
) -> dict:
    """Plain and the I/O floor of kmq's format, then per marker format our
    client with an ack() each and with ack_all(), every run on a queue of
    its own; a tracker then digests the last ack_all queue's markers: the
    queue sustains the slower of the two. Client and plain rates are
    medians of ``repeats`` runs."""

    def queue(**kwargs: object) -> QueueConfig:
        return filled_queue(bootstrap, n, size, settle_s, **kwargs)

    plain = median_rate(lambda: plain_consume(queue(), n), repeats)
    floor = io_floor_consume(queue(), n, batch)
    formats = {
        fmt: _format_throughput(queue, n, batch, fmt, plain["median"], repeats)
        for fmt in MARKER_FORMATS
    }
    return {
        "messages": n,
        "message_bytes": size,
        "batch": batch,
        "repeats": repeats,
        "settle_s": settle_s,
        "plain_consumer_msgs_per_s": round(plain["median"]),
        "plain_consumer_spread": [round(plain["min"]), round(plain["max"])],
        "kmq_io_floor_msgs_per_s": round(floor),
        "io_floor_vs_plain": round(floor / plain["median"], 3),
        "marker_formats": formats,
    }


def _format_throughput(
    queue: Callable[..., QueueConfig],
    n: int,
    batch: int,
    marker_format: str,
    plain: float,
    repeats: int,
) -> dict:
    queues: list[QueueConfig] = []

    def client(each: bool) -> float:
        queues.append(queue(marker_format=marker_format))
        return kmq_consume(queues[-1], n, batch, each)

    kmq = median_rate(lambda: client(each=True), repeats)
    whole = median_rate(lambda: client(each=False), repeats)
    batched = queues[-1]
    marker_records = len(read_topic(batched.bootstrap_servers, batched.markers_topic, PARTITIONS))
    digest = tracker_digest(batched, n)
    sustained = min(whole["median"], digest)
    return {
        "client_with_ack_msgs_per_s": round(kmq["median"]),
        "client_with_ack_vs_plain": round(kmq["median"] / plain, 3),
        "client_ack_all_msgs_per_s": round(whole["median"]),
        "client_ack_all_spread": [round(whole["min"]), round(whole["max"])],
        "marker_records_per_message": round(marker_records / n, 4),
        "tracker_digest_msgs_per_s": round(digest),
        "sustained_msgs_per_s": round(sustained),
        "sustained_vs_plain": round(sustained / plain, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3, help="runs per client rate (median)")
    parser.add_argument(
        "--settle-s", type=float, default=3.0, help="pause after filling a throughput queue"
    )
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--open", type=int, default=1_000_000)
    parser.add_argument("--only", choices=("throughput", "tracker", "redelivery_accuracy"))
    parser.add_argument("--accuracy-messages", type=int, default=20_000)
    parser.add_argument("--accuracy-timeout-ms", type=int, default=5000)
    parser.add_argument(
        "--accuracy-kafka-config",
        type=json.loads,
        default={},
        help="librdkafka settings (JSON) for the redelivery accuracy queues' clients",
    )
    args = parser.parse_args()
    sections = {
        "throughput": lambda b: [
            throughput(b, args.messages, args.size, batch, args.repeats, args.settle_s)
            for batch in (500, 5000)
        ],
        "tracker": lambda b: [open_markers(b, args.open, fmt) for fmt in MARKER_FORMATS],
        "redelivery_accuracy": lambda b: redelivery_accuracy(
            b, args.accuracy_messages, args.accuracy_timeout_ms, args.accuracy_kafka_config
        ),
    }
    report({k: v for k, v in sections.items() if args.only in (None, k)})


if __name__ == "__main__":
    main()
