"""TrackedPartition: what a markers partition says, applied without a broker."""

from confluent_kafka import KafkaError

from kmqadmin.kmq import markers
from kmqadmin.kmq.markers import MarkerError
from kmqadmin.kmq.tracking.tracked_partition import TrackedPartition, apply_batch
from tests.consumed_record import ConsumedRecord

P = 2


def applied(*records: ConsumedRecord) -> tuple[TrackedPartition, list[tuple[int, str]]]:
    state = TrackedPartition(partition=P, next_offset=10)
    skipped: list[tuple[int, str]] = []

    def on_skip(s: TrackedPartition, offset: int, exc: MarkerError) -> None:
        assert s is state
        skipped.append((offset, str(exc)))

    apply_batch({P: state}, records, on_skip)
    return state, skipped


def marker(offset: int, queue_offset: int, value: bytes, timestamp: int = 0) -> ConsumedRecord:
    return ConsumedRecord(P, offset, markers.encode_key(P, queue_offset), value, timestamp)


def test_kmqs_start_is_due_its_timeout_after_the_marker_timestamp() -> None:
    state, skipped = applied(marker(10, 100, markers.start(30_000), timestamp=1_000))
    assert state.open.next_deadline() == 31_000
    assert state.next_offset == 11
    assert state.last_read is not None and state.last_read.offset() == 10
    assert skipped == []


def test_an_epoch_ms_start_is_its_own_deadline() -> None:
    state, _ = applied(marker(10, 100, markers.start(1_700_000_000_000), timestamp=5))
    assert state.open.next_deadline() == 1_700_000_000_000


def test_end_closes_and_the_commit_point_moves_past_it() -> None:
    state, _ = applied(
        marker(10, 100, markers.start(1_000)),
        marker(11, 101, markers.start(1_000)),
        marker(12, 100, markers.END),
    )
    assert len(state.open) == 1
    assert state.commit_offset() == 11  # the oldest start marker still open
    state.open.end(101, 101)
    assert state.commit_offset() == 13  # none open: the next to read


def test_reject_makes_it_due_now_with_its_reason_and_end_forgets_it() -> None:
    state, _ = applied(
        marker(10, 100, markers.start(60_000)),
        marker(11, 101, markers.start(60_000)),
        marker(12, 100, markers.reject("bad payload")),
        marker(13, 101, markers.reject("late")),
        marker(14, 101, markers.END),
    )
    assert state.rejected == {100: "bad payload"}
    assert state.open.pop_due(now=1, limit=10) == [100]


def test_a_reject_for_what_is_not_open_is_ignored() -> None:
    state, _ = applied(marker(10, 100, markers.reject("gone")))
    assert state.rejected == {}


def test_extend_and_redeliver_now_move_the_deadline() -> None:
    state, _ = applied(
        marker(10, 100, markers.start(1_000)),
        marker(11, 101, markers.start(1_000)),
        marker(12, 100, markers.extend(50_000)),
        marker(13, 101, markers.REDELIVER_NOW),
    )
    assert state.open.pop_due(now=1_000, limit=10) == [101]
    assert state.open.next_deadline() == 50_000


def test_a_return_is_due_now_and_keeps_its_count_until_an_end() -> None:
    state, _ = applied(
        marker(10, 100, markers.start(1_000)),
        marker(11, 101, markers.start(1_000)),
        marker(12, 102, markers.start(1_000)),
        marker(13, 100, markers.RETURN),
        marker(14, 101, markers.RETURN),
        marker(15, 101, markers.END),  # taken after all: nothing to give back
        marker(16, 103, markers.RETURN),  # not open: ignored
    )
    assert state.returned == {100}
    assert state.open.pop_due(now=1, limit=10) == [100]


def test_garbage_and_foreign_markers_are_skipped_with_the_reason() -> None:
    state, skipped = applied(
        ConsumedRecord(P, 10, b"short", markers.END),
        marker(11, 100, b"\x09"),
        ConsumedRecord(P, 12, markers.encode_key(P + 1, 100), markers.start(1)),
    )
    assert [offset for offset, _ in skipped] == [10, 11, 12]
    assert "12 bytes" in skipped[0][1]
    assert "unknown marker type 0x09" in skipped[1][1]
    assert "queue partition 3 on markers partition 2" in skipped[2][1]
    assert len(state.open) == 0
    assert state.next_offset == 13  # skipped, but read


def test_records_of_partitions_not_owned_and_errors_are_passed_over() -> None:
    eof = KafkaError(KafkaError._PARTITION_EOF)
    state, skipped = applied(
        ConsumedRecord(P + 1, 50, markers.encode_key(P + 1, 1), markers.start(1)),
        ConsumedRecord(P, 51, None, None, error_=eof),
    )
    assert (state.next_offset, len(state.open), skipped) == (10, 0, [])


def test_the_batch_counts_the_end_markers_that_close_an_open_delivery() -> None:
    state = TrackedPartition(partition=P, next_offset=10)
    records = [
        marker(10, 100, markers.start(1_000)),
        marker(11, 101, markers.start(1_000)),
        marker(12, 100, markers.END),
        marker(13, 100, markers.END),  # again: nothing left to close
        marker(14, -1, markers.END),  # the tracker's barrier
        marker(15, 102, markers.END),  # a redelivered copy the tracker closed itself
        marker(16, 101, markers.END + b"x"),  # not a marker: skipped, not counted
        # not this partition's:
        ConsumedRecord(P + 1, 17, markers.encode_key(P, 101), markers.END, 0),
        marker(18, 101, markers.END),
    ]
    assert apply_batch({P: state}, records, lambda *_: None) == 2


def test_compact_ranges_open_and_close_whole_batches_and_count_what_they_closed() -> None:
    state = TrackedPartition(partition=P, next_offset=10)
    records = [
        marker(10, 100, markers.start_range(1_000, 599), timestamp=5),
        marker(11, 100, markers.reject("poison")),
        marker(12, 100, markers.end_range(299)),  # 200 acks, the rejected one among them
        marker(13, 250, markers.end_range(349)),  # 50 more: the first 50 were closed
        marker(14, 400, markers.END),
    ]
    assert apply_batch({P: state}, records, lambda *_: None) == 251
    assert state.rejected == {}  # ended: no longer bound for the DLQ
    assert len(state.open) == 249
    assert state.commit_offset() == 10
    due = state.open.pop_due(1_005, 1_000)
    assert due == [*range(350, 400), *range(401, 600)]


def test_bad_ranges_are_skipped_with_their_coordinates_and_reason() -> None:
    state, skipped = applied(
        marker(10, 100, markers.start_range(1_000, 99)),
        marker(11, 100, markers.end_range(100 + markers.MAX_SPAN)),
        marker(12, 100, markers.start_range(1_000, 120)[:-3]),
        marker(13, 100, markers.start_range(1_000, 120)),
    )
    assert skipped == [
        (10, "range 100..99 is empty or reversed"),
        (11, f"range 100..{100 + markers.MAX_SPAN} spans more than {markers.MAX_SPAN} offsets"),
        (12, "START_RANGE marker must be 17 bytes, got 14"),
    ]
    assert len(state.open) == 21 and state.next_offset == 14
