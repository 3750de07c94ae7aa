"""What the live consumer's records do to the held schedules: the latest
version of a key wins. A valid record due within the horizon is held
(replacing its key's older version); anything else removes the key; a
record that is not a schedule (no key, a bad time) is skipped and counted
by the caller."""

from collections.abc import Callable, Mapping

from confluent_kafka import KafkaError
from confluent_kafka import Message as KafkaMessage

from kmqadmin.scheduler import wire
from kmqadmin.scheduler.partition import Key, PartitionState
from kmqadmin.scheduler.store import key_hash

Skip = Callable[[KafkaMessage, str], None]
Touched = Callable[[int, Key], None]


def apply_batch(
    states: Mapping[int, PartitionState],
    records: list[KafkaMessage],
    horizon_end: int,
    barrier_key: bytes,
    skip: Skip,
    touched: Touched | None,
) -> list[KafkaError]:
    """Applies ``records`` to their partitions' states; ``touched`` (a
    rescan under way) hears of every key applied. Returns the consumer's
    errors met on the way, for the caller to log."""
    errors = []
    for record in records:
        if (error := record.error()) is not None:
            if error.code() != KafkaError._PARTITION_EOF:
                errors.append(error)
            continue
        state = states.get(record.partition())
        if state is None:
            continue
        offset, key = record.offset(), record.key()
        state.next_offset = offset + 1
        if key is None:
            skip(record, "no key (a schedule's key is its id)")
        elif key != barrier_key:
            _apply(state, record, offset, key_hash(key), horizon_end, skip, touched)
    return errors


def _apply(
    state: PartitionState,
    record: KafkaMessage,
    offset: int,
    hashed: Key,
    horizon_end: int,
    skip: Skip,
    touched: Touched | None,
) -> None:
    deadline = None
    if record.value() is not None:
        try:
            deadline = wire.deadline(wire.headers_of(record))
        except wire.ScheduleError as exc:
            skip(record, str(exc))
            return
    state.forget(hashed)
    if touched is not None:
        touched(state.partition, hashed)
    if deadline is not None and deadline < horizon_end:
        state.store.put(*hashed, deadline, offset)
    else:
        state.store.remove(*hashed)
