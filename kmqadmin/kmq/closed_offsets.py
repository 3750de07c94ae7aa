"""ClosedOffsets: the queue offsets whose delivery is over, to tell a replayed start.

A consumer reads its partition in order from the group's committed offset,
so when its commit was refused (a rebalance, a crash, a broker failing
over) it reads messages again and writes their start markers again. If the
first delivery is already over (acked, sent on as a copy, dead-lettered),
tracking the replay would send a second copy. Closings come nearly in
offset order, so they are kept as sorted, disjoint [low, high) ranges that
merge as the gaps fill: a handful of ranges for millions of offsets. The
gaps that never fill (transaction markers and aborted records in the queue
topic, messages still open) are bounded by dropping the oldest ranges past
``max_ranges``: a replay comes from a recent committed offset, not from far
behind.
"""

from array import array
from bisect import bisect_right

MAX_RANGES = 1024  # 16 KB per partition at most


class ClosedOffsets:
    def __init__(self, max_ranges: int = MAX_RANGES) -> None:
        self.max_ranges = max_ranges
        self._lows = array("q")
        self._highs = array("q")  # exclusive

    def __contains__(self, offset: int) -> bool:
        i = bisect_right(self._lows, offset)
        return i > 0 and self._highs[i - 1] > offset

    def __len__(self) -> int:
        """The number of ranges held."""
        return len(self._lows)

    def add(self, offset: int) -> None:
        lows, highs = self._lows, self._highs
        if highs and highs[-1] == offset:  # the common case: acks in order
            highs[-1] = offset + 1
            return
        i = bisect_right(lows, offset)
        if i > 0 and highs[i - 1] > offset:
            return  # already closed
        joins_below = i > 0 and highs[i - 1] == offset
        joins_above = i < len(lows) and lows[i] == offset + 1
        if joins_below and joins_above:
            highs[i - 1] = highs[i]
            del lows[i], highs[i]
        elif joins_below:
            highs[i - 1] = offset + 1
        elif joins_above:
            lows[i] = offset
        else:
            lows.insert(i, offset)
            highs.insert(i, offset + 1)
            if len(lows) > self.max_ranges:
                del lows[0], highs[0]
