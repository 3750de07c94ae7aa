"""The schedules of one partition that are due within the horizon, packed.

A held schedule is four int64 columns (128-bit key hash, deadline, offset of
its record), a 4-byte slot in an open-addressing index and a 4-byte entry in
a timing wheel: about 50 bytes and no Python object per schedule, so
millions fit. The key itself is not kept: its 128-bit BLAKE2b hash stands
for it (a collision among 10^9 keys has odds below 10^-20), and the payload
is read back from the topic when the schedule fires.

The wheel has one bucket per ``bucket_ms`` of deadlines. A bucket is sorted
(heapified) only when its time comes, so an insert costs an append and the
firing order is exact. An update leaves the old wheel entry behind; it is
recognised as stale when its bucket is armed and dropped.
"""

import hashlib
import heapq
import struct
from array import array
from collections.abc import Iterator

FREE = -1
_PAIR = struct.Struct(">qq")
_MIN_TABLE = 16


def key_hash(key: bytes) -> tuple[int, int]:
    """The 128-bit identity of a schedule key, as two signed int64 halves."""
    return _PAIR.unpack(hashlib.blake2b(key, digest_size=16).digest())


class ScheduleStore:
    def __init__(self, bucket_ms: int = 10_000) -> None:
        self._bucket_ms = bucket_ms
        self._his = array("q")
        self._los = array("q")
        self._deadlines = array("q")  # FREE for a slot nobody holds
        self._offsets = array("q")
        self._free = array("i")  # slots to reuse
        self._table = array("i", bytes(4 * _MIN_TABLE))  # slot + 1; 0 = empty
        self._count = 0
        self._buckets: dict[int, array] = {}  # bucket number -> slots
        self._bucket_heap: list[int] = []
        self._armed_until = 0  # buckets below this number are in _ready
        self._ready: list[tuple[int, int]] = []  # heap of (deadline, slot)

    def __len__(self) -> int:
        return self._count

    # --- by key ----------------------------------------------------------

    def put(self, hi: int, lo: int, deadline: int, offset: int) -> None:
        """Holds (or replaces) the schedule with key hash (hi, lo)."""
        i = self._probe(hi, lo)
        if i >= 0:
            slot = self._table[i] - 1
            old = self._deadlines[slot]
            self._deadlines[slot] = deadline
            self._offsets[slot] = offset
            if old != deadline:
                self._enqueue(slot, deadline)
            return
        slot = self._allocate(hi, lo, deadline, offset)
        self._table[-i - 1] = slot + 1
        self._count += 1
        if self._count * 2 > len(self._table):
            self._resize(len(self._table) * 2)
        self._enqueue(slot, deadline)

    def get(self, hi: int, lo: int) -> tuple[int, int] | None:
        """(deadline, offset) of the held schedule, or None."""
        i = self._probe(hi, lo)
        if i < 0:
            return None
        slot = self._table[i] - 1
        return self._deadlines[slot], self._offsets[slot]

    def remove(self, hi: int, lo: int) -> bool:
        """Forgets the schedule; False when it was not held."""
        i = self._probe(hi, lo)
        if i < 0:
            return False
        self._release(i)
        return True

    # --- by time ---------------------------------------------------------

    def pop_due(self, until: int, limit: int) -> list[tuple[int, int, int, int]]:
        """Removes and returns up to ``limit`` schedules due at or before
        ``until``, earliest first, as (deadline, offset, hi, lo)."""
        due: list[tuple[int, int, int, int]] = []
        while len(due) < limit:
            self._prune_ready()
            if not self._ready:
                if not self._arm_next(until):
                    break
                continue
            if self._ready[0][0] > until:
                break
            deadline, slot = heapq.heappop(self._ready)
            due.append((deadline, self._offsets[slot], self._his[slot], self._los[slot]))
            self._release(self._index_of(slot))
        return due

    def next_deadline(self) -> int | None:
        """The earliest deadline held (a bucket's start when its bucket is not
        armed yet: early, never late), to know how long the loop may sleep."""
        self._prune_ready()
        if self._ready:
            return self._ready[0][0]
        if self._bucket_heap:
            return self._bucket_heap[0] * self._bucket_ms
        return None

    def entries(self) -> Iterator[tuple[int, int]]:
        """(deadline, offset) of every held schedule, unordered."""
        deadlines, offsets = self._deadlines, self._offsets
        for slot in range(len(deadlines)):
            if (deadline := deadlines[slot]) != FREE:
                yield deadline, offsets[slot]

    def memory_bytes(self) -> int:
        """Bytes of the packed structures (what a held schedule costs)."""
        arrays = [self._his, self._los, self._deadlines, self._offsets, self._free, self._table]
        arrays += self._buckets.values()
        return sum(a.buffer_info()[1] * a.itemsize for a in arrays)

    # --- internals -------------------------------------------------------

    def _probe(self, hi: int, lo: int) -> int:
        """Index of the key's table entry, or -(index of the empty entry) - 1."""
        table, his, los = self._table, self._his, self._los
        mask = len(table) - 1
        i = lo & mask
        while s := table[i]:
            if los[s - 1] == lo and his[s - 1] == hi:
                return i
            i = (i + 1) & mask
        return -i - 1

    def _index_of(self, slot: int) -> int:
        return self._probe(self._his[slot], self._los[slot])

    def _allocate(self, hi: int, lo: int, deadline: int, offset: int) -> int:
        if self._free:
            slot = self._free.pop()
            self._his[slot], self._los[slot] = hi, lo
            self._deadlines[slot], self._offsets[slot] = deadline, offset
            return slot
        self._his.append(hi)
        self._los.append(lo)
        self._deadlines.append(deadline)
        self._offsets.append(offset)
        return len(self._his) - 1

    def _release(self, i: int) -> None:
        """Frees the slot at table index ``i`` and closes the gap it leaves
        (backward-shift deletion: no tombstones to slow later probes)."""
        table, los = self._table, self._los
        mask = len(table) - 1
        slot = table[i] - 1
        self._deadlines[slot] = FREE
        self._free.append(slot)
        self._count -= 1
        j = i
        while True:
            j = (j + 1) & mask
            s = table[j]
            if not s:
                break
            home = los[s - 1] & mask
            if (j - home) & mask >= (j - i) & mask:
                table[i] = s
                i = j
        table[i] = 0

    def _resize(self, size: int) -> None:
        table = array("i", bytes(4 * size))
        mask = size - 1
        los, deadlines = self._los, self._deadlines
        for slot in range(len(deadlines)):
            if deadlines[slot] != FREE:
                i = los[slot] & mask
                while table[i]:
                    i = (i + 1) & mask
                table[i] = slot + 1
        self._table = table

    def _enqueue(self, slot: int, deadline: int) -> None:
        bucket = deadline // self._bucket_ms
        if bucket < self._armed_until:
            heapq.heappush(self._ready, (deadline, slot))
            return
        entries = self._buckets.get(bucket)
        if entries is None:
            entries = self._buckets[bucket] = array("i")
            heapq.heappush(self._bucket_heap, bucket)
        entries.append(slot)

    def _arm_next(self, until: int) -> bool:
        """Moves the earliest bucket into the ready heap if its time has come."""
        heap = self._bucket_heap
        if not heap or heap[0] * self._bucket_ms > until:
            return False
        bucket = heapq.heappop(heap)
        self._armed_until = bucket + 1
        deadlines, size = self._deadlines, self._bucket_ms
        ready = [
            (deadlines[slot], slot)
            for slot in set(self._buckets.pop(bucket))
            if deadlines[slot] != FREE and deadlines[slot] // size == bucket
        ]
        heapq.heapify(ready)
        self._ready = ready  # only ever armed once the ready heap is empty
        return True

    def _prune_ready(self) -> None:
        """Drops stale heads: slots freed or moved to another deadline since."""
        ready, deadlines = self._ready, self._deadlines
        while ready and deadlines[ready[0][1]] != ready[0][0]:
            heapq.heappop(ready)
