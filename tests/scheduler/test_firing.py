"""What one firing turn takes: pure logic, no broker."""

from kmqadmin.scheduler import firing
from kmqadmin.scheduler.partition import Armed, PartitionState
from kmqadmin.scheduler.wire import Target


def _state(partition: int, deadlines: list[int], caught_up: bool = True) -> PartitionState:
    state = PartitionState(partition=partition, catch_up_to=0 if caught_up else 1)
    for offset, deadline in enumerate(deadlines):
        target = Target("out", None, b"v", [])
        state.arm((partition, offset), Armed(deadline, offset, b"k%d" % offset, target))
    return state


def _taken(firings: list[firing.Firing]) -> dict[int, list[int]]:
    return {f.state.partition: [entry.deadline for _, entry in f.entries] for f in firings}


def test_a_turn_takes_no_more_than_its_budget_most_overdue_partition_first() -> None:
    early, late = _state(0, [50, 60, 70, 80]), _state(1, [10, 20, 30])
    assert _taken(firing.due([early, late], now=100, budget=5)) == {
        1: [10, 20, 30],
        0: [50, 60],
    }
    # The rest is due at once: the next turn takes it.
    assert _taken(firing.due([early, late], now=100, budget=5)) == {0: [70, 80]}
    assert firing.due([early, late], now=100, budget=5) == []


def test_nothing_is_taken_before_its_deadline_or_its_partition_caught_up() -> None:
    loading = _state(0, [10], caught_up=False)
    waiting = _state(1, [10, 200])
    assert _taken(firing.due([loading, waiting], now=100, budget=10)) == {1: [10]}
    assert waiting.first_due() == 200


def test_what_an_aborted_turn_took_is_taken_again() -> None:
    state = _state(0, [10, 20])
    (taken,) = firing.due([state], now=100, budget=10)
    taken.rearm()
    assert _taken(firing.due([state], now=100, budget=10)) == {0: [10, 20]}
