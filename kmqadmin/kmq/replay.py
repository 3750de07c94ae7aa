"""Replay and purge: bulk moves over a queue's offsets, for the console's jobs.

Replay sends a range of a queue partition again, as fresh messages (kmq-id
kept, delivery count reset), while the workers run: nothing about the
group changes. The range is given by offsets, or by time: from the first
record at or after ``since`` to the first at or after ``until``, both found
with offsets_for_times (KIP-33), as Kafka's own tools turn times into
offsets. Only that range is read.

Purge moves the workers' group to the end of every partition and acks what
is in flight. Kafka moves only an empty group's offsets, so the workers
must be stopped first; the broker's refusal is reported as it is.
"""

from collections.abc import Iterator

from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.admin.stretch import OffsetRange, Stretch
from kmqadmin.kafka.admin.topics import admin_client, topic_partitions
from kmqadmin.kafka.client.checked_producer import CheckedProducer
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.kmq.config import QueueConfig
from kmqadmin.kmq.copies import send_again
from kmqadmin.kmq.marker_writer import MarkerWriter
from kmqadmin.kmq.readers.inflight import InFlightView

BATCH = 1000


class Replayer:
    def __init__(self, config: QueueConfig) -> None:
        self.config = config
        self._consumer = Consumer(
            consumer_config(
                config.bootstrap_servers,
                f"{config.tracker_group_id}__replay",
                {"fetch.wait.max.ms": 5, **config.kafka_config},
            )
        )
        self._producer = CheckedProducer(config.bootstrap_servers, config.kafka_config)

    def spans(
        self,
        partition: int | None = None,
        start: int | None = None,
        end: int | None = None,
        since_ms: int | None = None,
        until_ms: int | None = None,
    ) -> list[OffsetRange]:
        """The spans to replay: one partition or all, by offsets or by time.

        Each ends at most at the partition's end now, pinned before the
        replay adds to it (its copies may land on the same partition)."""
        topic = self.config.topic
        partitions = topic_partitions(self._consumer, topic)
        chosen = partitions if partition is None else [p for p in partitions if p == partition]
        spans = []
        for p in chosen:
            low, high = self._consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            first = start if start is not None else self._at(p, since_ms, low, high)
            last = end if end is not None else self._at(p, until_ms, high, high)
            spans.append(OffsetRange(topic, p, max(first, low), min(last, high)))
        return spans

    def replay(self, span: OffsetRange) -> Iterator[tuple[int, int]]:
        """Sends the span again in batches; yields (position, sent so far)
        after each batch, one wait for the broker per batch."""
        sent = 0
        for position, records in self._read(span):
            send_again(self._producer, self.config.topic, records)
            sent += len(records)
            yield position, sent

    def close(self) -> None:
        self._consumer.close()

    def _at(self, partition: int, ms: int | None, default: int, high: int) -> int:
        """The first offset at or after ``ms``; ``high`` when no record is
        that late, ``default`` without a time."""
        if ms is None:
            return default
        tp = TopicPartition(self.config.topic, partition, ms)
        found = self._consumer.offsets_for_times([tp], timeout=10)[0].offset
        return high if found < 0 else found

    def _read(self, span: OffsetRange) -> Iterator[tuple[int, list[KafkaMessage]]]:
        """The span's records in batches, with the position after each; a
        read never asks for records past the span's end."""
        if span.start >= span.end:
            return
        tp = TopicPartition(span.topic, span.partition, span.start)
        with Stretch(self._consumer, tp, span.end, batch=BATCH) as stretch:
            for records in stretch:
                yield stretch.position, records


def purge(config: QueueConfig) -> dict:
    """Group to the end of every partition, then an end marker for every
    open delivery. Raises KafkaException when the group is not empty."""
    admin = admin_client(config.bootstrap_servers, config.kafka_config)
    probe = Consumer(consumer_config(config.bootstrap_servers, "kmq-purge", config.kafka_config))
    try:
        ends = []
        for p in topic_partitions(probe, config.topic):
            high = probe.get_watermark_offsets(TopicPartition(config.topic, p), timeout=10)[1]
            ends.append(TopicPartition(config.topic, p, high))
    finally:
        probe.close()
    request = ConsumerGroupTopicPartitions(config.group_id, ends)
    for future in admin.alter_consumer_group_offsets([request]).values():
        future.result(timeout=30)
    view = InFlightView(config)
    try:
        view.refresh(budget_s=30)
        open_ = view.page(limit=view.count() or 1)
    finally:
        view.close()
    MarkerWriter(config).ack_all((d.partition, d.offset) for d in open_)
    return {"partitions": len(ends), "acked": len(open_)}
