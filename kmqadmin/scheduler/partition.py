"""What a scheduler keeps for one partition it owns."""

import heapq
from collections.abc import Iterator
from dataclasses import dataclass, field

from kmqadmin.kafka.ownership.owned import OwnedPartition
from kmqadmin.scheduler.stats import PlannedSchedule
from kmqadmin.scheduler.store import ScheduleStore
from kmqadmin.scheduler.wire import Target

Key = tuple[int, int]  # a schedule key's 128-bit hash


@dataclass(slots=True)
class Armed:
    """A schedule taken from the store, read back and made ready to fire."""

    deadline: int
    offset: int
    key: bytes  # the schedule's id, for its tombstone
    target: Target


@dataclass(eq=False, kw_only=True)
class PartitionState(OwnedPartition):
    """The held schedules (store) and the few read back and about to fire
    (armed); the owner's producer fires them (scheduler.py)."""

    store: ScheduleStore = field(default_factory=ScheduleStore)
    # Taken from the store, their read back under way: key -> (deadline, offset).
    reading: dict[Key, tuple[int, int]] = field(default_factory=dict)
    armed: dict[Key, Armed] = field(default_factory=dict)
    armed_heap: list[tuple[int, int, Key]] = field(default_factory=list)

    def forget(self, key: Key) -> None:
        """A newer version of ``key`` arrived: what was taken out for firing is stale."""
        if self.reading:
            self.reading.pop(key, None)
        if self.armed:
            self.armed.pop(key, None)

    def arm(self, key: Key, entry: Armed) -> None:
        self.armed[key] = entry
        heapq.heappush(self.armed_heap, (entry.deadline, entry.offset, key))

    def first_due(self) -> int | None:
        """The deadline of the earliest armed schedule (perhaps since updated)."""
        return self.armed_heap[0][0] if self.armed_heap else None

    def take_due(self, now: int, limit: int) -> list[tuple[Key, Armed]]:
        """Up to ``limit`` armed schedules due at ``now``, earliest first;
        they stay armed until fired."""
        heap, armed = self.armed_heap, self.armed
        due: list[tuple[Key, Armed]] = []
        while heap and heap[0][0] <= now and len(due) < limit:
            _, offset, key = heapq.heappop(heap)
            entry = armed.get(key)
            if entry is not None and entry.offset == offset:  # else updated meanwhile
                due.append((key, entry))
        return due

    def next_wake(self, lookahead: int) -> int | None:
        """When the loop must next fire, or ask for a read, for this partition."""
        wake = [first] if (first := self.first_due()) is not None else []
        if not self.reading and (deadline := self.store.next_deadline()) is not None:
            wake.append(deadline - lookahead)
        return min(wake) if wake else None

    def planned(self) -> Iterator[PlannedSchedule]:
        """Every schedule held, where its record is and when it fires."""
        p = self.partition
        for deadline, offset in self.store.entries():
            yield PlannedSchedule(deadline, p, offset)
        for deadline, offset in list(self.reading.values()):
            yield PlannedSchedule(deadline, p, offset)
        for armed in list(self.armed.values()):
            yield PlannedSchedule(armed.deadline, p, armed.offset)
