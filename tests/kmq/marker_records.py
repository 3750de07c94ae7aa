"""What a tracker can see of its pure state, for tests without a broker."""

from kmqadmin.kmq.tracking.tracked_partition import TrackedPartition


def snapshot(state: TrackedPartition) -> tuple:
    """Everything a tracker can see of the state; empties its open set."""
    seen = (state.next_offset, len(state.open), state.commit_offset(), dict(state.rejected))
    return seen, drain(state)


def drain(state: TrackedPartition) -> list[tuple[int, list[int], int]]:
    """Each deadline held, earliest first, with the queue offsets due at it
    and the commit point once they are gone."""
    due = []
    while (deadline := state.open.next_deadline()) is not None:
        due.append((deadline, state.open.pop_due(deadline, 10**6), state.commit_offset()))
    return due
