"""Following a topic live: the records written after the tail opened that
match a filter, handed out at a capped rate.

It starts at each partition's end as it opens (asked, not OFFSET_END, which
librdkafka resolves only at the first fetch and so could skip a record
written in between). A poll scans at most ``scan_cap`` records and hands out
at most ``rate`` matches; the matches past that are counted, not kept, so a
busy topic costs a viewer a bounded push while the page says what it left
out.
"""

import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from kmqadmin.kafka.admin.topics import topic_partitions
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.kafka.inspect.browse import BrowsedRecord, Match


@dataclass(frozen=True)
class TailBatch:
    records: list[BrowsedRecord]
    skipped: int  # matches past the rate cap, not handed out


class Tail:
    """An assigned consumer of every partition of ``topic``, from its end;
    one per viewer. ``close`` waits for a poll under way (a consumer closed
    while another thread consumes from it is librdkafka's undefined case)."""

    def __init__(
        self,
        bootstrap_servers: str,
        kafka_config: Mapping[str, Any],
        topic: str,
        match: Match | None,
        rate: int = 20,
        scan_cap: int = 5000,
    ) -> None:
        self.match, self.rate, self.scan_cap = match, rate, scan_cap
        self._lock = threading.Lock()
        self._closed = False
        group = f"kmqadmin-tail-{uuid.uuid4().hex[:8]}"  # assigned only: never joined
        config = {"fetch.wait.max.ms": 100, **kafka_config}
        self._consumer = Consumer(consumer_config(bootstrap_servers, group, config))
        try:
            ends = [
                TopicPartition(
                    topic,
                    p,
                    self._consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1],
                )
                for p in topic_partitions(self._consumer, topic)
            ]
            self._consumer.assign(ends)
        except BaseException:
            self._consumer.close()
            raise
        self.started = {tp.partition: tp.offset for tp in ends}

    def poll(self, wait_s: float) -> TailBatch:
        """What arrived within ``wait_s``: up to ``rate`` matches, and how
        many more matched."""
        with self._lock:
            if self._closed:
                return TailBatch([], 0)
            consumed = self._consumer.consume(self.scan_cap, wait_s)
        records = [r for r in consumed if r.error() is None]
        match = self.match
        matched = records if match is None else [r for r in records if match(r)]
        shown = [BrowsedRecord.of(record) for record in matched[: self.rate]]
        return TailBatch(shown, len(matched) - len(shown))

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._consumer.close()
