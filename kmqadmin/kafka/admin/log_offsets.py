"""A topic's partitions and the offsets of their logs (first, end, first at
a time) through confluent-kafka's AdminClient, each call bounded; a broker
error is a GroupError naming the topic, never a hang. And the one way
Kafka has to remove records before retention does: moving a log's first
offset (DeleteRecords)."""

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from typing import Any

from confluent_kafka import KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from kmqadmin.kafka.admin.groups import GroupError, Partition, UnknownTopic
from kmqadmin.kafka.admin.topics import admin_client


def log_admin(bootstrap_servers: str, kafka_config: Mapping[str, Any] | None) -> AdminClient:
    """An AdminClient that asking about a topic never creates: librdkafka's
    admin (a producer handle) asks for auto-creation by default, so a reset
    naming a mistyped topic would make it on a broker that allows that."""
    return admin_client(
        bootstrap_servers, {**(kafka_config or {}), "allow.auto.create.topics": False}
    )


class LogAdmin:
    """What each kind of group admin holds: an AdminClient that never
    creates a topic, the log offsets read through it, and a time limit."""

    def __init__(
        self,
        bootstrap_servers: str,
        kafka_config: Mapping[str, Any] | None = None,
        timeout_s: float = 5.0,
    ) -> None:
        self.timeout_s = timeout_s
        self._admin = log_admin(bootstrap_servers, kafka_config)
        self.logs = LogOffsets(self._admin, timeout_s)


class LogOffsets:
    def __init__(self, admin: AdminClient, timeout_s: float) -> None:
        self._admin = admin
        self.timeout_s = timeout_s

    def partitions(self, topic: str) -> list[Partition]:
        """Every partition of ``topic``, in order; UnknownTopic when it has none."""
        metadata = self._admin.list_topics(topic, timeout=self.timeout_s).topics.get(topic)
        if metadata is None or metadata.error is not None or not metadata.partitions:
            why = metadata.error if metadata is not None and metadata.error else "no partitions"
            raise UnknownTopic(f"topic {topic}: {why}")
        return [(topic, p) for p in sorted(metadata.partitions)]

    def earliest(self, partitions: Iterable[Partition]) -> dict[Partition, int]:
        return self._list(partitions, OffsetSpec.earliest())

    def latest(self, partitions: Iterable[Partition]) -> dict[Partition, int]:
        return self._list(partitions, OffsetSpec.latest())

    def at_time(self, partitions: Iterable[Partition], epoch_ms: int) -> dict[Partition, int]:
        """The first offset at or after the time; the end where there is none."""
        partitions = list(partitions)
        found = self._list(partitions, OffsetSpec.for_timestamp(epoch_ms))
        ends = self.latest([p for p in partitions if found[p] < 0])
        return {p: ends[p] if found[p] < 0 else found[p] for p in partitions}

    def delete_before(self, offsets: Mapping[Partition, int]) -> dict[Partition, int]:
        """Every record before the given offsets deleted; the logs' new first
        offsets. A consumer whose position falls behind starts from there."""
        asked = [TopicPartition(t, p, offset) for (t, p), offset in offsets.items()]
        if not asked:
            return {}
        return self._answers(
            f"deleting records of {sorted({t for t, _ in offsets})}",
            lambda: self._admin.delete_records(asked, request_timeout=self.timeout_s),
            lambda answer: answer.low_watermark,
        )

    def _list(self, partitions: Iterable[Partition], spec: OffsetSpec) -> dict[Partition, int]:
        asked = {TopicPartition(t, p): spec for t, p in partitions}
        if not asked:
            return {}
        return self._answers(
            f"log offsets of {sorted({tp.topic for tp in asked})}",
            lambda: self._admin.list_offsets(asked, request_timeout=self.timeout_s),
            lambda answer: answer.offset,
        )

    def _answers(
        self,
        doing: str,
        ask: Callable[[], Mapping[TopicPartition, Future]],
        offset_of: Callable[[Any], int],
    ) -> dict[Partition, int]:
        """Each partition's answer, waited for within the time limit; a
        broker's refusal or silence is a GroupError saying what was asked."""
        try:
            return {
                (tp.topic, tp.partition): offset_of(f.result(self.timeout_s))
                for tp, f in ask().items()
            }
        except (KafkaException, TimeoutError) as exc:
            raise GroupError(f"{doing}: {exc}") from None
