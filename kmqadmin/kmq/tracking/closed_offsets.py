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

A tracker that takes a partition over reads its markers from the committed
offset, so it never sees what was closed before it. The owner therefore
commits its newest ranges as the offset commit's metadata (to_metadata) and
the next owner starts from them (from_metadata). Kafka keeps that text with
the offset; a broker refuses more than offset.metadata.max.bytes (4096 by
default), so the text is held to half of that, newest ranges first.
"""

import base64
import binascii
import logging
from array import array
from bisect import bisect_left, bisect_right

log = logging.getLogger(__name__)

MAX_RANGES = 1024  # 16 KB per partition at most
METADATA_PREFIX = "kmqadmin-closed-v1:"
METADATA_CHARS = 2048


class ClosedOffsets:
    def __init__(self, max_ranges: int = MAX_RANGES) -> None:
        self.max_ranges = max_ranges
        self._lows = array("q")
        self._highs = array("q")  # exclusive

    def __contains__(self, offset: int) -> bool:
        highs = self._highs
        if not highs or offset >= highs[-1]:  # past every closed one: a new start
            return False
        i = bisect_right(self._lows, offset)
        return i > 0 and self._highs[i - 1] > offset

    def __len__(self) -> int:
        """The number of ranges held."""
        return len(self._lows)

    def add(self, offset: int) -> None:
        highs = self._highs
        if highs and highs[-1] == offset:  # the common case: acks in order
            highs[-1] = offset + 1
            return
        self.add_range(offset, offset + 1)

    def add_range(self, low: int, high: int) -> None:
        """Closes [low, high), merging with the ranges it touches."""
        low = max(low, 0)  # no record's below 0: the tracker's barrier end markers
        if low >= high:
            return
        lows, highs = self._lows, self._highs
        if highs and lows[-1] <= low <= highs[-1]:  # the common case: at the newest range
            highs[-1] = max(highs[-1], high)
            return
        i = bisect_left(highs, low)  # the first range that ends at or after low
        j = bisect_right(lows, high)  # past the last range that starts at or before high
        if i < j:  # touches ranges i..j-1: one range covers them all
            low, high = min(low, lows[i]), max(high, highs[j - 1])
            del lows[i + 1 : j], highs[i + 1 : j]
            lows[i], highs[i] = low, high
            return
        lows.insert(i, low)
        highs.insert(i, high)
        if len(lows) > self.max_ranges:
            del lows[0], highs[0]

    def gaps(self, low: int, high: int) -> list[tuple[int, int]]:
        """The runs of [low, high) that are not closed, as [first, last] pairs."""
        lows, highs = self._lows, self._highs
        i = bisect_right(highs, low)  # the first range that ends after low
        out, at = [], low
        while i < len(lows) and lows[i] < high:
            if lows[i] > at:
                out.append((at, lows[i] - 1))
            at = max(at, highs[i])
            i += 1
        if at < high:
            out.append((at, high - 1))
        return out

    def to_metadata(self, max_chars: int = METADATA_CHARS) -> str:
        """The newest ranges that fit in ``max_chars``, as offset-commit metadata:
        varints of (gap, length) pairs from the newest range down, base64."""
        budget = (max_chars - len(METADATA_PREFIX)) * 3 // 4
        out, previous_low = bytearray(), None
        for i in range(len(self._lows) - 1, -1, -1):
            low, high = self._lows[i], self._highs[i]
            gap = high if previous_low is None else previous_low - high
            pair = _varint(gap) + _varint(high - low)
            if len(out) + len(pair) > budget:
                break
            out += pair
            previous_low = low
        return METADATA_PREFIX + base64.b64encode(out).decode()

    @classmethod
    def from_metadata(cls, text: str | None, where: str) -> "ClosedOffsets":
        """What a previous owner committed; empty for any other text (kmq's own
        tracker commits none), with a warning naming ``where`` when it is ours
        but does not decode."""
        closed = cls()
        if not text or not text.startswith(METADATA_PREFIX):
            return closed
        try:
            numbers = _read_varints(base64.b64decode(text[len(METADATA_PREFIX) :], validate=True))
            ranges = _ranges(numbers)
        except (binascii.Error, ValueError) as exc:
            log.warning("%s: closed offsets in the commit metadata do not decode (%s)", where, exc)
            return closed
        for low, high in reversed(ranges):
            closed._lows.append(low)
            closed._highs.append(high)
        return closed


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_varints(data: bytes) -> list[int]:
    numbers, n, shift = [], 0, 0
    for byte in data:
        n |= (byte & 0x7F) << shift
        shift += 7
        if shift > 63:
            raise ValueError("a varint longer than 64 bits")
        if byte < 0x80:
            numbers.append(n)
            n = shift = 0
    if shift:
        raise ValueError("a truncated varint")
    return numbers


def _ranges(numbers: list[int]) -> list[tuple[int, int]]:
    """(gap, length) pairs from the newest range down, back to [low, high)."""
    if len(numbers) % 2:
        raise ValueError("an odd count of numbers")
    ranges, previous_low = [], None
    for gap, length in zip(numbers[::2], numbers[1::2], strict=True):
        if length == 0 or (previous_low is not None and gap == 0):
            raise ValueError("an empty range, or two that touch")
        high = gap if previous_low is None else previous_low - gap
        low = high - length
        if low < 0:
            raise ValueError(f"a range below offset 0: [{low}, {high})")
        ranges.append((low, high))
        previous_low = low
    return ranges
