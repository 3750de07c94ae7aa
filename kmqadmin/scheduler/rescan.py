"""The horizon rescan: loads the schedules that came within the horizon.

Only schedules due before the horizon's end are held; every half horizon the
end moves on and the partitions are re-read from their start, so schedules
that now fall in the new window [old end, new end) are loaded (etf1 rescans
at midnight; this is that, generalised). Firing and live updates go on
meanwhile: the rescan reads with its own consumer, a few thousand records per
loop turn, up to where the live consumer stood when it began. Nothing in the
window is due before half a horizon has passed, so the rescan has that long.

Latest version wins across the two readers: a key the live consumer touched
since the rescan began is the rescan's to leave alone, and a held version
with a higher offset is never replaced by an older one.
"""

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.scheduler import wire
from kmqadmin.scheduler.config import SchedulerConfig
from kmqadmin.scheduler.partition import PartitionState
from kmqadmin.scheduler.store import ScheduleStore, key_hash

log = logging.getLogger(__name__)


@dataclass
class Window:
    """One partition's share of a rescan."""

    store: ScheduleStore
    end_offset: int  # the live consumer's position when the rescan began
    touched: set[tuple[int, int]] = field(default_factory=set)
    done: bool = False


class Rescan:
    def __init__(
        self,
        consumer: Consumer,
        topic: str,
        low: int,
        high: int,
        is_barrier: Callable[[bytes], bool],
    ) -> None:
        self.low, self.high = low, high  # the window of deadlines, [low, high)
        self._consumer = consumer
        self._topic = topic
        self._is_barrier = is_barrier
        self._windows: dict[int, Window] = {}

    def add(self, partition: int, store: ScheduleStore, end_offset: int) -> None:
        self._windows[partition] = window = Window(store, end_offset)
        window.done = end_offset <= 0
        if not window.done:
            self._consumer.incremental_assign(
                [TopicPartition(self._topic, partition, OFFSET_BEGINNING)]
            )

    def drop(self, partition: int) -> None:
        """The partition was revoked: its store is gone, stop reading it."""
        window = self._windows.pop(partition, None)
        if window is not None and not window.done:
            self._consumer.incremental_unassign([TopicPartition(self._topic, partition)])

    def touched(self, partition: int, key: tuple[int, int]) -> None:
        """The live consumer applied a version of ``key`` past the rescan's end."""
        window = self._windows.get(partition)
        if window is not None and not window.done:
            window.touched.add(key)

    @property
    def done(self) -> bool:
        return all(w.done for w in self._windows.values())

    def step(self, max_records: int) -> None:
        """Reads and applies up to ``max_records`` without waiting for more."""
        for record in self._consumer.consume(max_records, 0.005):
            if record.error() is None:
                window = self._windows.get(record.partition())
                if window is not None and not window.done:
                    self._apply(window, record)
        pending = [TopicPartition(self._topic, p) for p, w in self._windows.items() if not w.done]
        if pending:
            for tp in self._consumer.position(pending):
                if tp.offset >= self._windows[tp.partition].end_offset:
                    self._finish(tp.partition)

    def close(self) -> None:
        self._consumer.close()

    def _finish(self, partition: int) -> None:
        window = self._windows[partition]
        window.done = True
        window.touched.clear()
        self._consumer.incremental_unassign([TopicPartition(self._topic, partition)])

    def _apply(self, window: Window, record: KafkaMessage) -> None:
        offset, key = record.offset(), record.key()
        if offset >= window.end_offset or key is None or self._is_barrier(key):
            return
        hashed = key_hash(key)
        if hashed in window.touched:
            return
        held = window.store.get(*hashed)
        if held is not None and held[1] >= offset:
            return  # the held version is this one or newer
        deadline = None
        if record.value() is not None:
            try:
                deadline = wire.deadline(wire.headers_of(record))
            except wire.ScheduleError:
                return  # counted and logged when the live consumer read it
        if deadline is not None and self.low <= deadline < self.high:
            window.store.put(*hashed, deadline, offset)
        elif held is not None:
            window.store.remove(*hashed)  # an older window version, superseded


class Horizon:
    """Where the held schedules end, and the rescan that moves it, if one is under way."""

    def __init__(self, config: SchedulerConfig, is_barrier: Callable[[bytes], bool]) -> None:
        self.config = config
        self.end = now_ms() + config.horizon_ms
        self.rescan: Rescan | None = None
        self._is_barrier = is_barrier

    def move(self, states: Iterable[PartitionState], batch_size: int) -> None:
        """Every half horizon, extends it and rescans for what came within it."""
        rescan = self.rescan
        if rescan is not None:
            rescan.step(batch_size)
            if rescan.done:
                rescan.close()
                self.rescan = None
            return
        now, config = now_ms(), self.config
        if now + config.horizon_ms // 2 < self.end:
            return
        old_end, self.end = self.end, now + config.horizon_ms
        group_id = f"{config.group_id}__rescan"
        self.rescan = Rescan(
            Consumer(consumer_config(config.bootstrap_servers, group_id, config.kafka_config)),
            config.topic,
            old_end,
            self.end,
            self._is_barrier,
        )
        for state in states:
            self.rescan.add(state.partition, state.store, state.next_offset)

    def drop(self, partition: int) -> None:
        if self.rescan is not None:
            self.rescan.drop(partition)

    def close(self) -> None:
        if self.rescan is not None:
            self.rescan.close()
        self.rescan = None
