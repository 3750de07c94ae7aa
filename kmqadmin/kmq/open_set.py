"""The open start markers of one markers partition, packed for millions of entries.

Start markers arrive in queue-offset order with deadlines that (for one
timeout) arrive in deadline order too, so the common case is an append to
three ``array('q')`` columns: 24 bytes per in-flight message and no Python
object per message. The head of those columns is at once the oldest open
start marker (the offset to commit) and the earliest deadline. Entries that
break the order (an extend, redeliver-now, a start replayed after a
rebalance, a client with a skewed clock) go to a small side heap instead. A
start replayed after its message was closed is ignored (start()); ``closed``
remembers which were, and a tracker taking the partition over starts from
what its predecessor committed of it (closed_offsets.py).
"""

import heapq
from array import array
from bisect import bisect_left

from .closed_offsets import ClosedOffsets

CLOSED = -1


class OpenSet:
    def __init__(self, closed: ClosedOffsets | None = None) -> None:
        self._offsets = array("q")  # queue offsets, strictly increasing
        self._deadlines = array("q")  # epoch ms, non-decreasing; CLOSED when done
        self._markers = array("q")  # marker offsets, increasing
        self._head = 0
        self._open = 0
        self._tail_deadline = CLOSED  # of the last appended entry, open or not
        self.closed = closed if closed is not None else ClosedOffsets()
        # queue offset -> (deadline, marker offset) for out-of-order entries
        self._side: dict[int, tuple[int, int]] = {}
        self._side_heap: list[tuple[int, int]] = []

    def __len__(self) -> int:
        return self._open + len(self._side)

    def start(self, offset: int, deadline: int, marker_offset: int) -> bool:
        """A start marker: the message at ``offset`` is due at ``deadline``.

        A start for a message already started is a replay: a consumer read
        it again because its offsets were not committed. While the first
        delivery is open, the replay supersedes it; once it is closed, the
        message's fate is decided and the replay is ignored (False), so the
        tracker never sends a second copy (closed_offsets.py)."""
        if offset in self.closed:
            return False
        self._close(offset)  # a replay of an open delivery supersedes it
        offsets = self._offsets
        in_order = not offsets or (offset > offsets[-1] and deadline >= self._tail_deadline)
        if in_order:
            self._offsets.append(offset)
            self._deadlines.append(deadline)
            self._markers.append(marker_offset)
            self._tail_deadline = deadline
            self._open += 1
        else:
            self._side_add(offset, deadline, marker_offset)
        return True

    def end(self, offset: int) -> bool:
        """An end marker; False when the offset was not open (already done, or
        started before the markers this tracker read). Either way the message
        is closed: a tracker rebuilt from the commit point reads the ends of
        deliveries whose starts lie before it, and a replayed start after
        one of those must be ignored too."""
        self.closed.add(offset)
        return self._close(offset) is not None

    def reschedule(self, offset: int, deadline: int) -> bool:
        """Moves an open entry's deadline (extend, or redeliver now with 0)."""
        marker = self._close(offset)
        if marker is None:
            return False
        self._side_add(offset, deadline, marker)
        return True

    def pop_due(self, now: int, limit: int) -> list[int]:
        """Closes and returns up to ``limit`` offsets whose deadline has passed."""
        due: list[int] = []
        deadlines, i, n = self._deadlines, self._head, len(self._deadlines)
        while i < n and len(due) < limit:
            deadline = deadlines[i]
            if deadline != CLOSED:
                if deadline > now:
                    break
                due.append(self._offsets[i])
                deadlines[i] = CLOSED
                self._open -= 1
            i += 1
        self._advance()
        heap = self._side_heap
        while heap and heap[0][0] <= now and len(due) < limit:
            deadline, offset = heapq.heappop(heap)
            if self._side.get(offset, (None,))[0] == deadline:
                del self._side[offset]
                due.append(offset)
        for offset in due:
            self.closed.add(offset)
        return due

    def next_deadline(self) -> int | None:
        """The earliest deadline held, to know how long the tracker may sleep."""
        self._advance()
        candidates = []
        if self._head < len(self._deadlines):
            candidates.append(self._deadlines[self._head])
        self._prune_side_heap()
        if self._side_heap:
            candidates.append(self._side_heap[0][0])
        return min(candidates) if candidates else None

    def commit_offset(self, next_marker_offset: int) -> int:
        """The offset of the oldest open start marker, or ``next_marker_offset``.

        Committing this means a restarted tracker re-reads exactly the markers
        it needs to rebuild the open set, and no more.
        """
        self._advance()
        oldest = next_marker_offset
        if self._head < len(self._markers):
            oldest = min(oldest, self._markers[self._head])
        if self._side:
            oldest = min(oldest, min(marker for _, marker in self._side.values()))
        return oldest

    def memory_bytes(self) -> int:
        """Bytes held by the packed columns (the per-message cost)."""
        return sum(col.buffer_info()[1] * col.itemsize for col in self._columns())

    # --- internals -----------------------------------------------------

    def _columns(self) -> tuple[array, array, array]:
        return self._offsets, self._deadlines, self._markers

    def _find(self, offset: int) -> int | None:
        i = bisect_left(self._offsets, offset, self._head)
        if i < len(self._offsets) and self._offsets[i] == offset:
            return i
        return None

    def _close(self, offset: int) -> int | None:
        """Closes an open entry; returns its marker offset, or None if not open."""
        side = self._side.pop(offset, None)
        if side is not None:
            return side[1]  # its heap entry goes stale and is skipped later
        i = self._find(offset)
        if i is None or self._deadlines[i] == CLOSED:
            return None
        self._deadlines[i] = CLOSED
        self._open -= 1
        return self._markers[i]

    def _side_add(self, offset: int, deadline: int, marker_offset: int) -> None:
        self._side[offset] = (deadline, marker_offset)
        heapq.heappush(self._side_heap, (deadline, offset))

    def _prune_side_heap(self) -> None:
        heap = self._side_heap
        while heap and self._side.get(heap[0][1], (None,))[0] != heap[0][0]:
            heapq.heappop(heap)

    def _advance(self) -> None:
        """Drops closed entries at the head; compacts once half the columns are dead."""
        deadlines, n = self._deadlines, len(self._deadlines)
        while self._head < n and deadlines[self._head] == CLOSED:
            self._head += 1
        if self._head and self._head * 2 >= n:
            for col in self._columns():
                del col[: self._head]
            self._head = 0
