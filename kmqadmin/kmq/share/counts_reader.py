"""Reads a share queue's per-minute counts (share_counts) back for a chart.

Only the window asked for is read: each partition of the counts topic is
sought with offsets_for_times to the first record written since the
window's first minute began (a client writes a minute's record after that
minute ends, so nothing older can hold one of its minutes) and read up to the
end offset it had when the read began, within a deadline. A record that is
not a counts record is counted, logged with its coordinates and skipped.
"""

import logging
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaException, TopicPartition

from kmqadmin.kafka.admin.topics import topic_partitions
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.kmq.share.counts import MINUTE_MS, BadCounts, ShareCounts, decode, minute_of

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CountsWindow:
    """One summed ShareCounts per minute, oldest first (minutes nobody
    reported are zeros), and how many records were not counts. ``complete``
    is False when the deadline cut the read short. ``clients``: per client
    id (the record's key), its counts summed over the window, with the
    minute and the in_flight gauge of its latest report."""

    minutes: list[ShareCounts]
    bad_records: int
    complete: bool
    clients: dict[str, ShareCounts]

    def in_flight(self) -> int:
        """What the clients held at their latest reports, summed over those
        that reported in the window's last two minutes: a client that has
        not reported since is gone, and what it held went back to the broker."""
        if not self.minutes:
            return 0
        recent = self.minutes[-1].minute - MINUTE_MS
        return sum(c.in_flight for c in self.clients.values() if c.minute >= recent)


class ShareCountsReader:
    """An assign-only consumer of one counts topic (its group is never
    joined). Thread-safe: one read at a time (the web process keeps one)."""

    def __init__(
        self,
        bootstrap_servers: str,
        counts_topic: str,
        extra: Mapping[str, Any] | None = None,
        timeout_s: float = 5.0,
    ) -> None:
        self.topic = counts_topic
        self.timeout_s = timeout_s
        group = f"kmq-counts-reader-{uuid.uuid4().hex[:8]}"
        config = {"fetch.wait.max.ms": 50, **(extra or {})}
        self._consumer = Consumer(consumer_config(bootstrap_servers, group, config))
        self._lock = threading.Lock()

    def last(self, minutes: int, now: int | None = None) -> CountsWindow:
        """The ``minutes`` whole minutes before the current one, summed."""
        first = minute_of(now_ms() if now is None else now) - minutes * MINUTE_MS
        sums = {first + i * MINUTE_MS: ShareCounts(first + i * MINUTE_MS) for i in range(minutes)}
        clients: dict[str, ShareCounts] = {}
        with self._lock:
            bad, complete = self._read(first, sums, clients)
        return CountsWindow(list(sums.values()), bad, complete, clients)

    def close(self) -> None:
        self._consumer.close()

    def _read(
        self, since: int, sums: dict[int, ShareCounts], clients: dict[str, ShareCounts]
    ) -> tuple[int, bool]:
        deadline = time.monotonic() + self.timeout_s
        starts, ends = self._bounds(since)
        pending = {p for p in starts if starts[p] < ends[p]}
        if not pending:
            return 0, True
        bad = 0
        self._consumer.assign([TopicPartition(self.topic, p, starts[p]) for p in pending])
        try:
            while pending and time.monotonic() < deadline:
                for record in self._consumer.consume(500, timeout=0.2):
                    if record.error() is not None or record.partition() not in pending:
                        continue
                    bad += self._add(record, sums, clients)
                    if record.offset() + 1 >= ends[record.partition()]:
                        pending.discard(record.partition())
        finally:
            self._consumer.unassign()
        return bad, not pending

    def _bounds(self, since: int) -> tuple[dict[int, int], dict[int, int]]:
        """Per partition: the first offset written at or after ``since``,
        and the end offset now."""
        partitions = topic_partitions(self._consumer, self.topic, self.timeout_s)
        asked = [TopicPartition(self.topic, p, since) for p in partitions]
        try:
            found = self._consumer.offsets_for_times(asked, timeout=self.timeout_s)
            ends = {
                p: self._consumer.get_watermark_offsets(
                    TopicPartition(self.topic, p), timeout=self.timeout_s
                )[1]
                for p in partitions
            }
        except KafkaException as exc:
            raise TimeoutError(f"counts topic {self.topic}: {exc}") from None
        # -1: nothing written since; start at the end (nothing to read).
        starts = {tp.partition: ends[tp.partition] if tp.offset < 0 else tp.offset for tp in found}
        return starts, ends

    def _add(
        self, record: Any, sums: dict[int, ShareCounts], clients: dict[str, ShareCounts]
    ) -> int:
        try:
            counts = decode(record)
        except BadCounts as exc:
            log.warning(
                "skipping a record that is not share counts at %s[%d]@%d: %s",
                record.topic(),
                record.partition(),
                record.offset(),
                exc,
            )
            return 1
        if (summed := sums.get(counts.minute)) is not None:
            summed.add(counts)
            _per_client(clients, (record.key() or b"").decode(errors="replace"), counts)
        return 0


def _per_client(clients: dict[str, ShareCounts], client: str, counts: ShareCounts) -> None:
    total = clients.get(client)
    if total is None:
        clients[client] = ShareCounts(**asdict(counts))
        return
    latest = counts if counts.minute >= total.minute else total
    minute, in_flight = latest.minute, latest.in_flight
    total.add(counts)
    total.minute, total.in_flight = minute, in_flight
