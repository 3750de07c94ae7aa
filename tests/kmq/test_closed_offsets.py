"""ClosedOffsets: ranges that merge as gaps fill, bounded (pure logic)."""

from hypothesis import given
from hypothesis import strategies as st

from kmqadmin.kmq.closed_offsets import ClosedOffsets


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
