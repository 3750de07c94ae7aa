"""UpcomingView: the live schedules of a topic, for the console and the API.

A schedules topic *is* its schedules (compacted, latest version per key), so
the view reads it once from the start, as a scheduler does, and then tails
it a little on every refresh: a request reads only what was written since
the previous one. It keeps per schedule its deadline, target topic and
coordinates, never the payload.
"""

import heapq
import threading
import time
import uuid
from dataclasses import dataclass

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.admin.caught_up import caught_up
from kmqadmin.kafka.admin.offset_reader import OffsetReader
from kmqadmin.kafka.admin.topics import topic_partitions
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.kafka.client.record import hexed
from kmqadmin.scheduler import wire
from kmqadmin.scheduler.config import SchedulerConfig
from kmqadmin.scheduler.schedule_refs import ref_of
from kmqadmin.scheduler.scheduler import BARRIER_KEY


@dataclass(frozen=True, slots=True)
class Upcoming:
    id: str  # the key as text to show; undecodable bytes as U+FFFD
    due_ms: int
    target_topic: str
    partition: int
    offset: int
    allowed: bool = True  # False: the target is not allowed, the scheduler skips it
    key: bytes = b""

    @property
    def ref(self) -> str:
        """What addresses it in URLs and forms: schedule_refs.ref_of."""
        return ref_of(self.key)


@dataclass(frozen=True, slots=True)
class Unfireable:
    """A schedule record the scheduler skips, as the schedules page shows it:
    where it is, why, and its key and value in hex (its id may not be text)."""

    partition: int
    offset: int
    reason: str
    key_hex: str | None
    value_hex: str | None


# Unfireable records the view keeps to show, the latest of each key.
UNFIREABLE_SHOWN = 100


class UpcomingView:
    """Thread-safe: web requests share one view per schedules topic."""

    def __init__(self, config: SchedulerConfig) -> None:
        self.config = config
        self.skipped = 0
        self.complete = False  # the last refresh drained everything written so far
        self._lock = threading.Lock()
        self._live: dict[bytes, Upcoming] = {}
        self._forbidden: set[bytes] = set()  # live ids whose target is not allowed
        self._unfireable: dict[bytes, Unfireable] = {}
        group = f"{config.group_id}__view-{uuid.uuid4().hex[:8]}"
        self._consumer = Consumer(
            consumer_config(config.bootstrap_servers, group, config.kafka_config)
        )
        topic = config.topic
        self._assigned = [
            TopicPartition(topic, p, OFFSET_BEGINNING)
            for p in topic_partitions(self._consumer, topic)
        ]
        self._consumer.assign(self._assigned)
        self._reader = OffsetReader(
            config.bootstrap_servers, topic, f"{group}-reader", config.kafka_config
        )

    def refresh(self, budget_s: float = 0.5) -> None:
        """Reads what was written since the last refresh, for at most ``budget_s``."""
        with self._lock:
            deadline = time.monotonic() + budget_s
            while not caught_up(self._consumer, self._assigned):
                if time.monotonic() >= deadline:
                    self.complete = False
                    return
                for record in self._consumer.consume(5000, 0.05):
                    if record.error() is None:
                        self._apply(record)
            self.complete = True

    def count(self) -> int:
        with self._lock:
            return len(self._live)

    def forbidden(self) -> int:
        """Live schedules the scheduler will skip: their target is not allowed."""
        with self._lock:
            return len(self._forbidden)

    def page(self, limit: int = 50, after: tuple[int, str] | None = None) -> list[Upcoming]:
        """Up to ``limit`` schedules in (due time, id) order after the cursor.
        Ids that read alike (undecodable keys, shown with U+FFFD) are told
        apart by their key bytes."""
        with self._lock:
            items = [
                (u.due_ms, u.id, key, u)
                for key, u in self._live.items()
                if after is None or (u.due_ms, u.id) > after
            ]
        return [u for _, _, _, u in heapq.nsmallest(limit, items)]

    def unfireable(self) -> list[Unfireable]:
        """The latest skipped version of each key still unanswered by a newer
        one, oldest first (bounded: UNFIREABLE_SHOWN)."""
        with self._lock:
            return list(self._unfireable.values())

    def get(self, key: bytes) -> Upcoming | None:
        with self._lock:
            return self._live.get(key)

    def record(self, upcoming: Upcoming) -> KafkaMessage | None:
        """The schedule's record (payload and headers), or None if compacted away."""
        with self._lock:
            found = self._reader.read(upcoming.partition, [upcoming.offset])
        return found.get(upcoming.offset)

    def close(self) -> None:
        with self._lock:
            self._consumer.close()
            self._reader.close()

    def _apply(self, record: KafkaMessage) -> None:
        key = record.key()
        if key is None or key == BARRIER_KEY:
            return
        self._unfireable.pop(key, None)
        if record.value() is None:
            self._live.pop(key, None)
            self._forbidden.discard(key)
            return
        try:
            due = wire.deadline(wire.headers_of(record))
            topic = wire.target(record, self.config.topic).topic
        except wire.ScheduleError as exc:
            self.skipped += 1  # skipped as the scheduler skips it: the older version stands
            self._remember_unfireable(key, record, str(exc))
            return
        allowed = self.config.allows(topic)
        if allowed:
            self._forbidden.discard(key)
        else:
            self._forbidden.add(key)
        self._live[key] = Upcoming(
            key.decode(errors="replace"),
            due,
            topic,
            record.partition(),
            record.offset(),
            allowed,
            key,
        )

    def _remember_unfireable(self, key: bytes, record: KafkaMessage, reason: str) -> None:
        self._unfireable[key] = Unfireable(
            record.partition(), record.offset(), reason, hexed(key), hexed(record.value())
        )
        while len(self._unfireable) > UNFIREABLE_SHOWN:
            del self._unfireable[next(iter(self._unfireable))]
