"""OpenSet: the tracker's per-partition state (pure logic)."""

import random

from hypothesis import given
from hypothesis import strategies as st

from kmqadmin.kmq.tracking.open_set import OpenSet


def test_due_in_deadline_order_and_commit_offset_is_oldest_open() -> None:
    s = OpenSet()
    for i in range(5):
        s.start(100 + i, 100 + i, 1000 + i, 10 + i)
    assert s.end(101, 101)
    assert not s.end(101, 101)
    assert s.commit_offset(15) == 10
    assert s.pop_due(now=1002, limit=10) == [100, 102]
    assert s.commit_offset(15) == 13
    assert len(s) == 2
    assert s.next_deadline() == 1003


def test_extend_and_redeliver_now_reorder() -> None:
    s = OpenSet()
    s.start(1, 1, 1000, 0)
    s.start(2, 2, 1001, 1)
    assert s.reschedule(1, 5000)  # extend
    assert s.reschedule(2, 0)  # redeliver now
    assert not s.reschedule(3, 0)  # unknown
    assert s.pop_due(now=1500, limit=10) == [2]
    assert s.commit_offset(2) == 0  # the extended entry still holds its start marker
    assert s.pop_due(now=5000, limit=10) == [1]
    assert s.commit_offset(2) == 2


def test_replayed_start_after_rebalance_supersedes() -> None:
    s = OpenSet()
    s.start(5, 5, 1000, 0)
    s.start(6, 6, 1000, 1)
    s.start(5, 5, 3000, 7)  # replayed out of order
    assert len(s) == 2
    assert s.pop_due(2000, 10) == [6]
    assert s.pop_due(3000, 10) == [5]


def test_a_start_replayed_after_its_message_closed_is_ignored() -> None:
    """A consumer that read messages again (its commit was refused while a
    broker failed over) must not make the tracker send second copies."""
    s = OpenSet()
    for offset in (5, 6, 7):
        assert s.start(offset, offset, 1000, offset)
    assert s.end(5, 5)  # acked
    assert s.pop_due(1000, 1) == [6]  # sent on as a copy
    assert not s.start(5, 5, 9000, 10)  # the replays
    assert not s.start(6, 6, 9000, 11)
    assert s.start(7, 7, 9000, 12)  # still open: the replay supersedes it
    assert s.start(8, 8, 9000, 13)  # new
    assert len(s) == 2
    assert sorted(s.pop_due(10_000, 10)) == [7, 8]


def test_an_end_read_without_its_start_still_stops_a_replay() -> None:
    """A tracker rebuilt from the commit point reads the end marker of a
    delivery whose start lies before it; the worker's replay comes after."""
    s = OpenSet()
    assert not s.end(5, 5)  # its start was before the commit point
    assert not s.start(5, 5, 9000, 3)
    assert len(s) == 0


def test_a_hostile_start_far_ahead_hides_no_real_one() -> None:
    s = OpenSet()
    assert s.start(10_000, 10_000, 1000, 0)  # no record will ever be there
    assert s.pop_due(1000, 10) == [10_000]  # the tracker gives up on it
    assert s.start(0, 0, 2000, 1)  # the real first message is tracked
    assert s.pop_due(2000, 10) == [0]


def test_limit_is_respected() -> None:
    s = OpenSet()
    for i in range(10):
        s.start(i, i, 0, i)
    assert s.pop_due(1, limit=3) == [0, 1, 2]
    assert len(s) == 7


@given(
    st.lists(
        st.tuples(
            st.sampled_from("seraSE"), st.integers(0, 40), st.integers(0, 100), st.integers(0, 6)
        )
    )
)
def test_matches_a_plain_dict_model(ops: list[tuple[str, int, int, int]]) -> None:
    """Random starts and ends (of one offset, or of a range: S, E),
    reschedules and pops agree with a naive model, offset by offset."""
    s, model, closed = OpenSet(), {}, set()
    marker = 0
    for op, offset, deadline, span in ops:
        last = offset + span if op in "SE" else offset
        covered = range(offset, last + 1)
        if op in "sS":
            opened = [o for o in covered if o not in closed]
            assert s.start(offset, last, deadline, marker) == len(opened)
            model.update(dict.fromkeys(opened, (deadline, marker)))
            marker += 1
        elif op in "eE":
            ended = [o for o in covered if model.pop(o, None) is not None]
            assert s.end(offset, last) == len(ended)
            closed.update(covered)
        elif op == "r":
            known = offset in model
            assert s.reschedule(offset, deadline) == known
            if known:
                model[offset] = (deadline, model[offset][1])
        else:
            due = s.pop_due(deadline, limit=span + 1)
            expected = {o for o, (d, _) in model.items() if d <= deadline}
            assert len(due) == min(span + 1, len(expected)) and set(due) <= expected
            for o in due:
                del model[o]
            closed.update(due)
        assert len(s) == len(model)
        soon = s.due_by(deadline, limit=span + 1)  # left open: nothing changes
        assert len(soon) <= span + 1 and len(s) == len(model)
        assert all(o in model and model[o][0] <= deadline for o in soon)
        oldest = min((m for _, m in model.values()), default=marker)
        assert s.commit_offset(marker) == oldest


def test_random_acks_keep_memory_bounded() -> None:
    s, rng = OpenSet(), random.Random(7)
    for i in range(50_000):
        s.start(i, i, i, i)
        if i >= 100:
            s.end(o := rng.randrange(i - 100, i), o)
    s.pop_due(10**9, 10**6)
    assert len(s) == 0
    s.start(10**6, 10**6, 0, 10**6)
    assert s.memory_bytes() < 50_000 * 24 / 2


# --- compact ranges -----------------------------------------------------------


def test_a_range_acked_but_for_three_redelivers_just_those() -> None:
    s = OpenSet()
    assert s.start(1000, 1499, 5_000, 7) == 500
    for offset in (1003, 1200, 1499):  # acked one by one
        assert s.end(offset, offset) == 1
    assert len(s) == 497
    due = s.pop_due(5_000, 10_000)
    assert due == [o for o in range(1000, 1500) if o not in (1003, 1200, 1499)]


def test_partial_acks_by_runs_leave_the_rest_open() -> None:
    s = OpenSet()
    s.start(0, 499, 5_000, 7)
    assert s.end(0, 99) == 100
    assert s.end(150, 499) == 350
    assert s.end(140, 160) == 10  # overlaps what was acked: counts what was open
    assert sorted(s.pop_due(5_000, 1000)) == list(range(100, 140))
    assert s.commit_offset(99) == 99


def test_extend_and_release_of_one_message_inside_a_range() -> None:
    s = OpenSet()
    s.start(0, 9, 5_000, 7)
    s.start(10, 19, 6_000, 8)
    assert s.reschedule(4, 9_000)  # extend
    assert s.reschedule(15, 0)  # release: due now
    assert s.pop_due(1, 100) == [15]
    assert s.commit_offset(9) == 7  # the range still holds its start marker
    assert s.pop_due(5_000, 100) == [0, 1, 2, 3, 5, 6, 7, 8, 9]
    assert s.commit_offset(9) == 7  # the extended one still holds it
    assert s.pop_due(6_000, 100) == [10, 11, 12, 13, 14, 16, 17, 18, 19]
    assert s.pop_due(9_000, 100) == [4]
    assert s.commit_offset(9) == 9


def test_a_range_popped_in_parts_keeps_its_marker_until_the_last() -> None:
    s = OpenSet()
    s.start(0, 9, 5_000, 7)
    assert s.pop_due(5_000, 4) == [0, 1, 2, 3]
    assert s.commit_offset(8) == 7
    assert s.pop_due(5_000, 100) == [4, 5, 6, 7, 8, 9]
    assert s.commit_offset(8) == 8


def test_a_range_replayed_after_a_rebalance_reopens_only_what_was_open() -> None:
    """A consumer that read a batch again writes its start range again: what
    was acked or sent on stays closed, what is open is superseded."""
    s = OpenSet()
    s.start(0, 9, 5_000, 1)
    s.end(0, 2)  # acked
    assert s.pop_due(5_000, 2) == [3, 4]  # sent on as copies
    assert s.start(0, 14, 9_000, 2) == 10  # 5..9 replayed, 10..14 new
    assert len(s) == 10
    assert s.commit_offset(3) == 2
    assert sorted(s.pop_due(9_000, 100)) == list(range(5, 15))


def test_ranges_cost_next_to_nothing_per_message_and_kmqs_format_no_more_than_before() -> None:
    ranges = OpenSet()
    for batch in range(2_000):
        ranges.start(batch * 500, batch * 500 + 499, 1_700_000_000_000 + batch, batch)
    assert len(ranges) == 1_000_000
    assert ranges.memory_bytes() / 1_000_000 < 0.2
    singles = OpenSet()
    for i in range(100_000):
        singles.start(i, i, 1_700_000_000_000 + i, i)
    assert singles.memory_bytes() / 100_000 <= 28  # three columns (24 B), no last-offset one


def test_due_by_names_what_falls_due_soon_and_leaves_it_open() -> None:
    s = OpenSet()
    s.start(0, 499, 1_000, 0)  # a poll batch
    s.start(500, 999, 2_000, 1)
    s.end(10, 19)  # acked meanwhile
    assert s.due_by(999, 100) == []
    soon = s.due_by(1_000, 10_000)
    assert soon == [o for o in range(500) if not 10 <= o <= 19]
    assert s.due_by(2_000, 600) == soon + list(range(500, 610))
    assert len(s) == 990 and s.pop_due(1_000, 10_000) == soon
