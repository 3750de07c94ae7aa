"""The open deliveries of one markers partition, packed for millions of entries.

An entry is a run of queue offsets that went out together and are due at
once: one offset for each of kmq's start markers, a whole poll batch for a
compact START_RANGE. Start markers arrive in queue-offset order with
deadlines that (for one timeout) arrive in deadline order too, so the
common case is an append to ``array('q')`` columns: first offset, deadline
and marker offset, 24 bytes per entry, and the last offset once a run
longer than one offset is held (kmq's format never pays for it). No Python
object is made per message. The head of the columns is at once the oldest
open start marker (the offset to commit) and the earliest deadline.

Every offset of an entry is open. Closing part of one (an ack inside a
batch, an extend of one message) narrows it, or splits it in two with the
same deadline and marker, which keeps both orders; acks land near the
newest entries, where a split moves little. Entries that break the order
(an extend, redeliver-now, a start replayed after a rebalance, a client
with a skewed clock) go, offset by offset, to a small side heap instead. A
start replayed after its message was closed is ignored; ``closed``
remembers which were, and a tracker taking the partition over starts from
what its predecessor committed of it (closed_offsets.py).
"""

import heapq
from array import array
from bisect import bisect_right

from kmqadmin.kmq.tracking.closed_offsets import ClosedOffsets

CLOSED = -1


class OpenSet:
    def __init__(self, closed: ClosedOffsets | None = None) -> None:
        self._firsts = array("q")  # queue offsets, strictly increasing, runs disjoint
        self._lasts: array | None = None  # made once a run is longer than one offset
        self._deadlines = array("q")  # epoch ms, non-decreasing; CLOSED when done
        self._markers = array("q")  # marker offsets, non-decreasing
        self._head = 0
        self._open = 0  # offsets open in the columns
        self._tail_last = -1  # last offset of the last appended entry, open or not
        self._tail_deadline = CLOSED  # of the last appended entry, open or not
        self.closed = closed if closed is not None else ClosedOffsets()
        # queue offset -> (deadline, marker offset) for out-of-order entries
        self._side: dict[int, tuple[int, int]] = {}
        self._side_heap: list[tuple[int, int]] = []

    def __len__(self) -> int:
        return self._open + len(self._side)

    def start(self, first: int, last: int, deadline: int, marker_offset: int) -> int:
        """A start marker: the messages ``first``..``last`` are due at ``deadline``.

        A start for a message already started is a replay: a consumer read
        it again because its offsets were not committed. While the first
        delivery is open, the replay supersedes it; once it is closed, the
        message's fate is decided and the replay is ignored, so the tracker
        never sends a second copy (closed_offsets.py). Returns the offsets
        it opened."""
        if (  # kmq's format in order, a restart's million of them: no calls
            first == last
            and first > self._tail_last
            and deadline >= self._tail_deadline
            and first not in self._side
            and first not in self.closed
        ):
            self._firsts.append(first)
            if self._lasts is not None:
                self._lasts.append(first)
            self._deadlines.append(deadline)
            self._markers.append(marker_offset)
            self._tail_last, self._tail_deadline = first, deadline
            self._open += 1
            return 1
        if self._in_order(first, deadline) and self._columns_free(first, last):
            self._append(first, last, deadline, marker_offset)
            return last - first + 1
        return self._start_slowly(first, last, deadline, marker_offset)

    def end(self, first: int, last: int) -> int:
        """An end marker; returns how many of ``first``..``last`` were open
        (not those already done, nor those started before the markers this
        tracker read). Either way they are closed: a tracker rebuilt from the
        commit point reads the ends of deliveries whose starts lie before it,
        and a replayed start after one of those must be ignored too."""
        if first == last:  # kmq's format: one per message
            self.closed.add(first)
            return 0 if self._close(first) is None else 1
        self.closed.add_range(first, last + 1)
        return self._close_range(first, last)

    def reschedule(self, offset: int, deadline: int) -> bool:
        """Moves an open message's deadline (extend, or redeliver now with 0)."""
        marker = self._close(offset)
        if marker is None:
            return False
        self._side_add(offset, deadline, marker)
        return True

    def pop_due(self, now: int, limit: int) -> list[int]:
        """Closes and returns up to ``limit`` offsets whose deadline has passed."""
        due: list[int] = []
        deadlines, firsts, i, n = self._deadlines, self._firsts, self._head, len(self._deadlines)
        while i < n and len(due) < limit:
            deadline = deadlines[i]
            if deadline != CLOSED:
                if deadline > now:
                    break
                first, last = firsts[i], self._last(i)
                take = min(last, first + limit - len(due) - 1)
                due.extend(range(first, take + 1))
                self._open -= take - first + 1
                if take == last:
                    deadlines[i] = CLOSED
                else:
                    firsts[i] = take + 1
                    break
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

    def due_by(self, until: int, limit: int) -> list[int]:
        """Up to ``limit`` open offsets of the columns due at or before
        ``until``, earliest first, left open: what the tracker reads ahead of
        their deadline. The side's are not looked at: a scan of it every
        turn would cost as much as it is large, and what it holds is read
        when due, as every message was before reading ahead."""
        found: list[int] = []
        deadlines, firsts = self._deadlines, self._firsts
        for i in range(self._head, len(deadlines)):
            deadline = deadlines[i]
            if deadline == CLOSED:
                continue
            if deadline > until or len(found) >= limit:
                break
            first = firsts[i]
            found.extend(range(first, min(self._last(i), first + limit - len(found) - 1) + 1))
        return found

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

    def _columns(self) -> list[array]:
        columns = [self._firsts, self._deadlines, self._markers]
        if self._lasts is not None:
            columns.append(self._lasts)
        return columns

    def _last(self, i: int) -> int:
        return self._firsts[i] if self._lasts is None else self._lasts[i]

    def _in_order(self, first: int, deadline: int) -> bool:
        """After every entry held, by offset and by deadline."""
        return not self._firsts or (first > self._tail_last and deadline >= self._tail_deadline)

    def _columns_free(self, first: int, last: int) -> bool:
        """No offset of ``first``..``last`` closed, nor open on the side."""
        if first == last:
            return first not in self.closed and first not in self._side
        return self.closed.gaps(first, last + 1) == [(first, last)] and not any(
            first <= o <= last for o in self._side
        )

    def _append(self, first: int, last: int, deadline: int, marker_offset: int) -> None:
        if last != first and self._lasts is None:
            self._lasts = array("q", self._firsts)
        self._firsts.append(first)
        if self._lasts is not None:
            self._lasts.append(last)
        self._deadlines.append(deadline)
        self._markers.append(marker_offset)
        self._tail_last, self._tail_deadline = last, deadline
        self._open += last - first + 1

    def _start_slowly(self, first: int, last: int, deadline: int, marker_offset: int) -> int:
        """A start that overlaps what is held, or breaks the order: each run
        not closed supersedes what is open of it, then is appended if it
        still keeps the order, or goes to the side offset by offset."""
        opened = 0
        for low, high in self.closed.gaps(first, last + 1):
            self._close_range(low, high)
            opened += high - low + 1
            if self._in_order(low, deadline):
                self._append(low, high, deadline, marker_offset)
            else:
                for offset in range(low, high + 1):
                    self._side_add(offset, deadline, marker_offset)
        return opened

    def _find(self, offset: int) -> int | None:
        """The open entry holding ``offset``."""
        i = bisect_right(self._firsts, offset, self._head) - 1
        if i >= self._head and self._deadlines[i] != CLOSED and offset <= self._last(i):
            return i
        return None

    def _close(self, offset: int) -> int | None:
        """Closes an open message; returns its marker offset, or None if not open."""
        side = self._side.pop(offset, None)
        if side is not None:
            return side[1]  # its heap entry goes stale and is skipped later
        i = self._find(offset)
        if i is None:
            return None
        marker = self._markers[i]
        self._cut(i, offset, offset)
        return marker

    def _close_range(self, first: int, last: int) -> int:
        """Closes every open message of ``first``..``last``; returns how many."""
        closed = 0
        side = self._side
        if side:
            inside = [o for o in side if first <= o <= last]
            for offset in inside:
                del side[offset]
            closed += len(inside)
        firsts, deadlines = self._firsts, self._deadlines
        i = max(self._head, bisect_right(firsts, first, self._head) - 1)
        while i < len(firsts) and firsts[i] <= last:
            if deadlines[i] != CLOSED and self._last(i) >= first:
                low, high = max(first, firsts[i]), min(last, self._last(i))
                closed += high - low + 1
                i += self._cut(i, low, high)
            i += 1
        return closed

    def _cut(self, i: int, low: int, high: int) -> int:
        """Closes ``low``..``high`` inside open entry ``i``; returns 1 when
        that split the entry in two (the second half is then at i + 1)."""
        first, last = self._firsts[i], self._last(i)
        self._open -= high - low + 1
        if low == first and high == last:
            self._deadlines[i] = CLOSED
            return 0
        lasts = self._lasts
        assert lasts is not None  # a run longer than one offset
        if low == first:
            self._firsts[i] = high + 1
            return 0
        lasts[i] = low - 1
        if high == last:
            return 0
        self._firsts.insert(i + 1, high + 1)
        lasts.insert(i + 1, last)
        self._deadlines.insert(i + 1, self._deadlines[i])
        self._markers.insert(i + 1, self._markers[i])
        return 1

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
