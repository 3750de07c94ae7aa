"""OpenSet: the tracker's per-partition state (pure logic)."""

import random

from hypothesis import given
from hypothesis import strategies as st

from kmqadmin.kmq.open_set import OpenSet


def test_due_in_deadline_order_and_commit_offset_is_oldest_open() -> None:
    s = OpenSet()
    for i in range(5):
        s.start(offset=100 + i, deadline=1000 + i, marker_offset=10 + i)
    assert s.end(101)
    assert not s.end(101)
    assert s.commit_offset(15) == 10
    assert s.pop_due(now=1002, limit=10) == [100, 102]
    assert s.commit_offset(15) == 13
    assert len(s) == 2
    assert s.next_deadline() == 1003


def test_extend_and_redeliver_now_reorder() -> None:
    s = OpenSet()
    s.start(1, 1000, 0)
    s.start(2, 1001, 1)
    assert s.reschedule(1, 5000)  # extend
    assert s.reschedule(2, 0)  # redeliver now
    assert not s.reschedule(3, 0)  # unknown
    assert s.pop_due(now=1500, limit=10) == [2]
    assert s.commit_offset(2) == 0  # the extended entry still holds its start marker
    assert s.pop_due(now=5000, limit=10) == [1]
    assert s.commit_offset(2) == 2


def test_replayed_start_after_rebalance_supersedes() -> None:
    s = OpenSet()
    s.start(5, 1000, 0)
    s.start(6, 1000, 1)
    s.start(5, 3000, 7)  # replayed out of order
    assert len(s) == 2
    assert s.pop_due(2000, 10) == [6]
    assert s.pop_due(3000, 10) == [5]


def test_a_start_replayed_after_its_message_closed_is_ignored() -> None:
    """A consumer that read messages again (its commit was refused while a
    broker failed over) must not make the tracker send second copies."""
    s = OpenSet()
    for offset in (5, 6, 7):
        assert s.start(offset, 1000, offset)
    assert s.end(5)  # acked
    assert s.pop_due(1000, 1) == [6]  # sent on as a copy
    assert not s.start(5, 9000, 10)  # the replays
    assert not s.start(6, 9000, 11)
    assert s.start(7, 9000, 12)  # still open: the replay supersedes it
    assert s.start(8, 9000, 13)  # new
    assert len(s) == 2
    assert sorted(s.pop_due(10_000, 10)) == [7, 8]


def test_an_end_read_without_its_start_still_stops_a_replay() -> None:
    """A tracker rebuilt from the commit point reads the end marker of a
    delivery whose start lies before it; the worker's replay comes after."""
    s = OpenSet()
    assert not s.end(5)  # its start was before the commit point
    assert not s.start(5, 9000, 3)
    assert len(s) == 0


def test_a_hostile_start_far_ahead_hides_no_real_one() -> None:
    s = OpenSet()
    assert s.start(10_000, 1000, 0)  # no record will ever be there
    assert s.pop_due(1000, 10) == [10_000]  # the tracker gives up on it
    assert s.start(0, 2000, 1)  # the real first message is tracked
    assert s.pop_due(2000, 10) == [0]


def test_limit_is_respected() -> None:
    s = OpenSet()
    for i in range(10):
        s.start(i, 0, i)
    assert s.pop_due(1, limit=3) == [0, 1, 2]
    assert len(s) == 7


def test_packed_cost_per_open_entry() -> None:
    s = OpenSet()
    n = 100_000
    for i in range(n):
        s.start(i, 1_700_000_000_000 + i, i)
    assert s.memory_bytes() / n <= 32


@given(st.lists(st.tuples(st.sampled_from("sera"), st.integers(0, 40), st.integers(0, 100))))
def test_matches_a_plain_dict_model(ops: list[tuple[str, int, int]]) -> None:
    """Random starts, ends, reschedules and pops agree with a naive model."""
    s, model, closed = OpenSet(), {}, set()
    marker = 0
    for op, offset, deadline in ops:
        if op == "s":
            assert s.start(offset, deadline, marker) == (offset not in closed)
            if offset not in closed:
                model[offset] = (deadline, marker)
            marker += 1
        elif op == "e":
            ended = model.pop(offset, None) is not None
            assert s.end(offset) == ended
            closed.add(offset)
        elif op == "r":
            known = offset in model
            assert s.reschedule(offset, deadline) == known
            if known:
                model[offset] = (deadline, model[offset][1])
        else:
            due = s.pop_due(deadline, limit=1000)
            expected = {o for o, (d, _) in model.items() if d <= deadline}
            assert set(due) == expected
            for o in due:
                del model[o]
            closed.update(due)
        assert len(s) == len(model)
        oldest = min((m for _, m in model.values()), default=marker)
        assert s.commit_offset(marker) == oldest


def test_random_acks_keep_memory_bounded() -> None:
    s, rng = OpenSet(), random.Random(7)
    for i in range(50_000):
        s.start(i, i, i)
        if i >= 100:
            s.end(rng.randrange(i - 100, i))
    s.pop_due(10**9, 10**6)
    assert len(s) == 0
    s.start(10**6, 0, 10**6)
    assert s.memory_bytes() < 50_000 * 24 / 2
