"""ClosedOffsets: ranges that merge as gaps fill, bounded (pure logic)."""

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kmqadmin.kmq.tracking.closed_offsets import METADATA_CHARS, METADATA_PREFIX, ClosedOffsets


@given(st.lists(st.integers(0, 200), max_size=300))
def test_holds_exactly_what_was_added_in_any_order(offsets: list[int]) -> None:
    closed = ClosedOffsets()
    for offset in offsets:
        closed.add(offset)
    assert [o for o in range(202) if o in closed] == sorted(set(offsets))


def test_in_order_closings_with_gaps_filled_make_one_range() -> None:
    closed = ClosedOffsets()
    for offset in [*range(0, 1000, 2), *range(1, 1000, 2)]:
        closed.add(offset)
    assert len(closed) == 1


def test_past_its_bound_it_forgets_the_oldest_ranges() -> None:
    closed = ClosedOffsets(max_ranges=3)
    for offset in (0, 2, 4, 6):  # four ranges: gaps at 1, 3, 5
        closed.add(offset)
    assert len(closed) == 3
    assert 0 not in closed and all(o in closed for o in (2, 4, 6))


def _ranges(closed: ClosedOffsets) -> list[tuple[int, int]]:
    return list(zip(closed._lows, closed._highs, strict=True))


@given(st.lists(st.integers(0, 2**40), max_size=2000))
def test_its_metadata_gives_the_next_owner_its_newest_ranges(offsets: list[int]) -> None:
    closed = ClosedOffsets()
    for offset in offsets:
        closed.add(offset)
    text = closed.to_metadata()
    assert len(text) <= METADATA_CHARS
    kept = _ranges(ClosedOffsets.from_metadata(text, "markers/0"))
    ranges = _ranges(closed)
    assert kept == ranges[len(ranges) - len(kept) :]  # a suffix: the newest
    assert len(kept) == len(ranges) or len(text) > METADATA_CHARS - 40


def test_a_million_offsets_with_a_gap_in_every_hundred_keep_their_newest_thousands() -> None:
    closed = ClosedOffsets()
    for offset in range(1_000_000):
        if offset % 100:
            closed.add(offset)
    restored = ClosedOffsets.from_metadata(closed.to_metadata(), "markers/0")
    assert 999_999 in restored and 999_900 not in restored
    assert all(o in restored for o in range(960_001, 960_100))
    assert len(restored) > 500


def test_metadata_that_is_not_ours_or_does_not_decode_is_an_empty_start(
    caplog: pytest.LogCaptureFixture,
) -> None:
    for text in (None, "", "written by kmq's own tracker"):
        assert len(ClosedOffsets.from_metadata(text, "markers/0")) == 0
    assert caplog.records == []
    broken = {
        "not base64": "***",
        "a truncated varint": base64.b64encode(b"\x05\x80").decode(),
        "an odd count": base64.b64encode(b"\x05").decode(),
        "below offset 0": base64.b64encode(b"\x05\x09").decode(),
        "touching ranges": base64.b64encode(b"\x0a\x02\x00\x02").decode(),
    }
    for why, payload in broken.items():
        caplog.clear()
        assert len(ClosedOffsets.from_metadata(METADATA_PREFIX + payload, "markers/3")) == 0, why
        assert "markers/3" in caplog.text, why


@given(st.lists(st.tuples(st.integers(0, 80), st.integers(1, 6)), max_size=40), st.data())
def test_ranges_merge_and_gaps_are_what_is_left(
    closings: list[tuple[int, int]], data: st.DataObject
) -> None:
    closed, model = ClosedOffsets(max_ranges=10**6), set()
    for low, length in closings:
        closed.add_range(low, low + length)
        model.update(range(low, low + length))
    lows, highs = list(closed._lows), list(closed._highs)
    assert all(lo < hi for lo, hi in zip(lows, highs, strict=True)) and all(
        highs[i] < lows[i + 1] for i in range(len(lows) - 1)
    )  # disjoint, sorted, never touching
    assert {o for o in range(100) if o in closed} == model
    low = data.draw(st.integers(0, 90))
    high = low + data.draw(st.integers(1, 20))
    left = [o for first, last in closed.gaps(low, high) for o in range(first, last + 1)]
    assert left == [o for o in range(low, high) if o not in model]
