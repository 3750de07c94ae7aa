"""What every benchmark shares: the broker it runs on, how it reports, and
reading a small topic whole to check what a run wrote."""

import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.kafka.embedded.broker import EmbeddedBroker


def rss_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def quantiles(ms: list[float]) -> dict:
    """p50 and p99 of sorted milliseconds, one convention for every figure here."""
    return {
        "p50_ms": round(statistics.median(ms), 1),
        "p99_ms": round(ms[int(len(ms) * 0.99) - 1], 1),
    }


def report(sections: dict[str, Callable[[str], object]]) -> None:
    """Runs each section against one embedded broker and prints one JSON document,
    with the broker's version, start time and resident memory.

    With KAFKA_BOOTSTRAP_SERVERS set, runs on that cluster instead (the tests'
    smoke runs use their session's broker); its version is then not known here.
    """
    if bootstrap := os.environ.get("KAFKA_BOOTSTRAP_SERVERS"):
        result: dict[str, object] = {"broker": f"KAFKA_BOOTSTRAP_SERVERS={bootstrap}"}
        result.update({name: section(bootstrap) for name, section in sections.items()})
        print(json.dumps(result, indent=2))
        return
    started = time.monotonic()
    with EmbeddedBroker() as broker:
        result = {
            "broker": f"embedded Apache Kafka {broker.version}",
            "broker_start_s": round(time.monotonic() - started, 2),
            "cores": os.cpu_count(),
        }
        for name, section in sections.items():
            result[name] = section(broker.bootstrap_servers)
        result["broker_rss_mb_at_end"] = round(broker.rss_bytes() / 2**20)
    print(json.dumps(result, indent=2))


# What a broker just back from a stall answers for a moment.
BACK_FROM_STALL = {KafkaError._UNKNOWN_PARTITION, KafkaError.NOT_LEADER_FOR_PARTITION}


def _consumer_with_ends(
    bootstrap_servers: str, tps: list[TopicPartition], extra: Mapping[str, Any] | None
) -> tuple[Consumer, list[int]]:
    """A new consumer and each partition's end offset. A broker back from a
    stall says for a moment that it knows no such partition, or leads none
    (it is fenced until it has registered with its controller again), and a
    client told so may have dropped that broker for good (librdkafka issue
    #5511): a new client asks again, for up to 30 s."""
    config = consumer_config(bootstrap_servers, f"snapshot-{uuid.uuid4().hex}", extra)
    deadline = time.monotonic() + 30
    while True:
        consumer = Consumer(config)
        try:
            return consumer, [consumer.get_watermark_offsets(tp, timeout=10)[1] for tp in tps]
        except KafkaException as exc:
            consumer.close()
            if exc.args[0].code() not in BACK_FROM_STALL or time.monotonic() > deadline:
                raise
        time.sleep(0.2)


def end_offsets(bootstrap_servers: str, topic: str, partitions: int) -> list[int]:
    """Each partition's end offset, as a read_committed consumer sees it now."""
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer, ends = _consumer_with_ends(bootstrap_servers, tps, None)
    consumer.close()
    return ends


def read_topic(
    bootstrap_servers: str,
    topic: str,
    partitions: int,
    extra: Mapping[str, Any] | None = None,
) -> list[KafkaMessage]:
    """Every committed record of ``topic`` from the start to its end as of now.

    Reads until each partition's position reaches the end reported at the
    start: a read_committed consumer is told the last stable offset, and its
    position moves past transaction markers and aborted records. For tests,
    benchmarks and small topics; pages of big topics must seek, never read
    it all: which is why it lives with the benchmarks (and the tests use it
    from here), not in kmqadmin.
    """
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer, ends = _consumer_with_ends(bootstrap_servers, tps, extra)
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    records: list[KafkaMessage] = []
    try:
        while True:
            records.extend(r for r in consumer.consume(2000, 0.5) if r.error() is None)
            positions = [max(tp.offset, 0) for tp in consumer.position(tps)]
            if all(p >= e for p, e in zip(positions, ends, strict=True)):
                return records
    finally:
        consumer.close()
