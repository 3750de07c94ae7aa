"""MarkersPartition's safe point: the commit point a redelivery sends while
another one that took from the same partition is still undecided."""

from confluent_kafka import TopicPartition

from kmqadmin.kmq.tracking.markers_partition import MarkersPartition

TOPIC = "queue__markers"


def opened() -> MarkersPartition:
    """Queue offsets 100-104 started at markers offsets 0-4, due at 1000;
    105 started at markers offset 5, due at 9000; read up to offset 6."""
    state = MarkersPartition(
        partition=0, next_offset=6, catch_up_to=0, committed=TopicPartition(TOPIC, 0, 0, "")
    )
    for i in range(5):
        state.open.start(100 + i, 100 + i, 1000, i)
    state.open.start(105, 105, 9000, 5)
    return state


def test_with_nothing_undecided_it_is_the_partitions_own_commit_point() -> None:
    state = opened()
    assert state.safe_point(TOPIC).offset == 0
    assert state.open.pop_due(2000, 100) == [100, 101, 102, 103, 104]
    assert state.safe_point(TOPIC).offset == 5  # 105's start marker: the oldest open


def test_while_a_redelivery_is_undecided_it_holds_what_that_one_took() -> None:
    """The first turn took 100-104 and commits behind; a second turn
    sending the partition's point now (5) would, if the first is aborted,
    leave 100-104 behind any restart's reading: it sends the last committed."""
    state = opened()
    state.open.pop_due(2000, 100)
    state.undecided.append(1500)  # began writing at 1500
    assert state.commit_point(TOPIC).offset == 5
    assert state.safe_point(TOPIC) is state.committed
    state.undecided.popleft()  # decided: committed, with its own point
    state.committed = state.commit_point(TOPIC)
    assert state.safe_point(TOPIC).offset == 5


def test_once_a_redelivery_is_aborted_it_holds_until_the_partition_is_read_again() -> None:
    state = opened()
    state.open.pop_due(2000, 100)
    state.failed = True  # aborted: 100-104 are open in the markers, not here
    assert state.safe_point(TOPIC).offset == 0


def test_its_metadata_is_the_closed_offsets_its_offset_goes_with() -> None:
    """A restart reads from the offset and takes the metadata's offsets for
    closed: the two must be from one moment (start_points.py)."""
    state = opened()
    state.open.end(101, 101)
    point = state.safe_point(TOPIC)
    assert (point.offset, point.metadata) == (0, state.open.closed.to_metadata())


def test_a_decision_moves_the_point_or_fails_the_partition_and_forgets_the_end_read() -> None:
    """The end the consumer reported was held by the transaction just
    decided: known_until may not use it for the next one's start."""
    state = opened()
    state.open.pop_due(2000, 100)
    state.undecided.extend([1500, 1600])
    state.end_read = 6
    assert state.held_since() == 1500
    state.decided(state.commit_point(TOPIC))
    assert (state.committed.offset, state.failed) == (5, False)
    assert (state.held_since(), state.end_read) == (1600, -1)
    state.end_read = 7
    state.decided(None)  # aborted
    assert (state.committed.offset, state.failed, state.held_since(), state.end_read) == (
        5,
        True,
        None,
        -1,
    )


def test_progress_is_a_point_only_once_its_offset_has_moved_and_nothing_is_undecided() -> None:
    state = opened()
    assert state.moved_point(TOPIC) is None  # 0, as committed
    state.open.pop_due(2000, 100)
    state.undecided.append(1500)
    assert state.moved_point(TOPIC) is None  # held by the undecided one
    state.decided(state.committed)  # committed without moving it
    point = state.moved_point(TOPIC)
    assert point is not None and point.offset == 5
    state.failed = True
    assert state.moved_point(TOPIC) is None
