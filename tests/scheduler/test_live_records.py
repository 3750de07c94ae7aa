"""live_records: the latest version of a key wins, applied without a broker."""

from confluent_kafka import KafkaError

from kmqadmin.scheduler import wire
from kmqadmin.scheduler.live_records import apply_batch
from kmqadmin.scheduler.partition import PartitionState
from kmqadmin.scheduler.store import key_hash
from tests.consumed_record import ConsumedRecord

P, HORIZON_END, BARRIER = 1, 10_000, b"barrier"


def record(
    offset: int,
    key: bytes | None,
    value: bytes | None,
    headers: list | None = None,
    partition: int = P,
    error: KafkaError | None = None,
) -> ConsumedRecord:
    """A consumed schedules record."""
    return ConsumedRecord(partition, offset, key, value, 0, error, headers or [], "schedules")


def schedule(offset: int, key: bytes, due: int) -> ConsumedRecord:
    return record(offset, key, b"payload", wire.schedule_headers(due, "target", key, []))


def applied(*records: ConsumedRecord) -> tuple[PartitionState, list[tuple[int, str]], list]:
    state = PartitionState(partition=P, catch_up_to=0)
    skipped: list[tuple[int, str]] = []
    touched: list = []

    def skip(record: ConsumedRecord, why: str) -> None:
        skipped.append((record.offset(), why))

    errors = apply_batch(
        {P: state}, list(records), HORIZON_END, BARRIER, skip, lambda p, k: touched.append(k)
    )
    assert errors == []
    return state, skipped, touched


def test_a_newer_version_replaces_the_older_and_a_tombstone_removes_it() -> None:
    state, _, _ = applied(schedule(0, b"a", 5000), schedule(1, b"a", 6000), schedule(2, b"b", 7000))
    assert sorted(state.store.entries()) == [(6000, 1), (7000, 2)]
    state, _, touched = applied(schedule(0, b"a", 5000), record(1, b"a", None))
    assert list(state.store.entries()) == []
    assert touched == [key_hash(b"a"), key_hash(b"a")]
    assert state.next_offset == 2


def test_a_schedule_past_the_horizon_is_not_held_and_drops_its_older_version() -> None:
    state, _, _ = applied(schedule(0, b"a", 5000), schedule(1, b"a", HORIZON_END + 1))
    assert list(state.store.entries()) == []


def test_records_that_are_not_schedules_are_skipped_with_a_reason() -> None:
    state, skipped, _ = applied(
        record(0, None, b"x"),
        record(1, b"a", b"x", [("not-a-schedule", b"1")]),
        record(2, BARRIER, None),
        schedule(3, b"b", 5000),
    )
    assert [offset for offset, _ in skipped] == [0, 1]
    assert "no key" in skipped[0][1]
    assert list(state.store.entries()) == [(5000, 3)]
    assert state.next_offset == 4


def test_a_partition_not_owned_is_left_alone_and_consumer_errors_are_handed_back() -> None:
    state = PartitionState(partition=P, catch_up_to=0)
    failure = KafkaError(KafkaError._TRANSPORT)
    errors = apply_batch(
        {P: state},
        [
            schedule(0, b"a", 5000),
            record(1, b"b", None, partition=P + 1),
            record(2, None, None, error=failure),
        ],
        HORIZON_END,
        BARRIER,
        lambda record, why: None,
        None,
    )
    assert errors == [failure]
    assert list(state.store.entries()) == [(5000, 0)]
