"""librdkafka's ShareConsumer behind ShareConsumer's interface, for share
queues that choose batch-optimized acquisition (fast work).

librdkafka speaks ShareFetch v1: each fetch acquires whole producer
batches, so one poll can lock thousands of records at once, which is what
makes it several times faster than record-limit acquisition when work is
quick. The price, documented with the choice: poll() hands the fetch out
``max_records`` at a time while all of it is locked and counted, the next
fetch waits until every record of the last one is acknowledged, refused
acknowledgements are known only when committed, and there is no RENEW.
"""

import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from confluent_kafka import (
    AcknowledgeType,
    IllegalStateException,
    KafkaError,
    KafkaException,
    ShareConsumer,
    TopicPartition,
)
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.client.clock import to_s
from kmqadmin.kafka.client.config import client_config
from kmqadmin.kafka.share_consumer.acknowledgements import Refusal
from kmqadmin.kafka.share_consumer.errors import ShareConsumerError, UnsettledRecords
from kmqadmin.kafka.share_consumer.leases import ACCEPT, REJECT, RELEASE, Lease

_TYPES = {
    ACCEPT: AcknowledgeType.ACCEPT,
    RELEASE: AcknowledgeType.RELEASE,
    REJECT: AcknowledgeType.REJECT,
}
COMMIT_TIMEOUT_S = 30.0


class BatchOptimizedConsumer:
    def __init__(
        self,
        bootstrap_servers: str,
        group_id: str,
        topic: str,
        lock_ms: int,
        kafka_config: Mapping[str, Any] | None = None,
    ) -> None:
        settings = {"group.id": group_id, "share.acknowledgement.mode": "explicit"}
        self._consumer = ShareConsumer(
            client_config(bootstrap_servers, {**settings, **(kafka_config or {})})
        )
        self._consumer.set_acknowledgement_commit_callback(self._committed)
        self._consumer.subscribe([topic])
        self._lock_ms = lock_ms
        # The last fetch, handed out up to _next; librdkafka fetches again only
        # once all of it is acknowledged, so it is all that can be held, under
        # one lease. No bookkeeping per record: this mode is for speed.
        self._fetched: Sequence[KafkaMessage] = ()
        self._next = 0
        self._lease: Lease | None = None
        self._acknowledged = 0  # of the last fetch
        self._unanswered = False  # acknowledged since the last commit
        self._refused: list[Refusal] = []
        self.acquired = 0
        self.malformed = 0
        # librdkafka does not say its member id: the counts' key is our own.
        self.member_id = str(uuid.uuid4())

    @property
    def held(self) -> int:
        return len(self._fetched) - self._acknowledged

    def lease(self, record: KafkaMessage) -> Lease | None:
        """The last fetch's lease: every record still held is of it."""
        return self._lease

    def poll(self, max_records: int, timeout: float) -> list[KafkaMessage]:
        if self._next >= len(self._fetched):
            self._fetch(timeout)
        start = self._next
        batch = list(self._fetched[start : start + max_records])
        self._next = start + len(batch)
        return batch

    def acknowledge(self, record: KafkaMessage, kind: int) -> None:
        self._consumer.acknowledge(record, _TYPES[kind])
        self._acknowledged += 1
        self._unanswered = True

    def acknowledge_all(self, records: list[KafkaMessage], kind: int) -> None:
        acknowledge, how = self._consumer.acknowledge, _TYPES[kind]
        for record in records:
            acknowledge(record, how)
        self._acknowledged += len(records)
        self._unanswered = self._unanswered or bool(records)

    def stale(self, records: list[KafkaMessage]) -> list[KafkaMessage]:
        """All of them once the last fetch's lock has run out (everything
        held is of that fetch), else none."""
        lease = self._lease
        return list(records) if lease is None or lease.expired else []

    def flush(self, wait: bool = True) -> list[Refusal]:
        """What the broker refused so far. With ``wait``, commits what is
        acknowledged first; without, the acknowledgements ride the next
        fetch, as librdkafka sends them, and their answers come after it."""
        if wait and self._unanswered:
            self._consumer.commit_sync(COMMIT_TIMEOUT_S)
            self._unanswered = False
        refused, self._refused = self._refused, []
        return refused

    def renew(self, records: Iterable[KafkaMessage]) -> list[Refusal]:
        raise ShareConsumerError(
            "extend() needs share_acquire_mode='record_limit': librdkafka's share "
            "consumer (batch_optimized) has no RENEW acknowledgement"
        )

    def close(self) -> None:
        self._consumer.close()

    def _fetch(self, timeout: float) -> None:
        sent = time.monotonic()
        try:
            records = self._consumer.poll(timeout)
        except IllegalStateException as exc:
            raise UnsettledRecords(
                f"{exc}: with share_acquire_mode='batch_optimized' the next fetch comes only "
                "once every message of the previous one is acked, released or rejected"
            ) from None
        good = []
        for record in records:
            if (error := record.error()) is None:
                good.append(record)
            elif error.code() != KafkaError._PARTITION_EOF:
                raise KafkaException(error)
        self.acquired += len(good)
        self._fetched, self._next, self._acknowledged = good, 0, 0
        self._lease = Lease(-1, sent + to_s(self._lock_ms), self._lock_ms) if good else None

    def _committed(self, offsets: dict[TopicPartition, set[int]], error: object) -> None:
        """librdkafka's answer to acknowledgements, whenever they were sent:
        refused ones are named by their coordinates."""
        if error is None:
            return
        for tp, found in offsets.items():
            for offset in sorted(found):
                record = KafkaMessage(topic=tp.topic, partition=tp.partition, offset=offset)
                self._refused.append(Refusal(record, ACCEPT, str(error)))
