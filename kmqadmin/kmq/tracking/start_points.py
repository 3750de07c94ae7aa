"""Where a tracker starts reading the markers partitions it now owns.

From each one's committed offset: the oldest start marker still open when
the previous owner last committed, with what it had closed past that point
in the commit's metadata (closed_offsets.py). A partition never committed
starts at its log's start. Asked for a whole assignment at once, one offset
fetch and one offset lookup: asked partition by partition, an owner of 96
partitions took two seconds to start.
"""

from dataclasses import dataclass

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

from kmqadmin.kmq.tracking.closed_offsets import ClosedOffsets

# A lookup of log starts answers at once, or its broker is away.
LOG_STARTS_TIMEOUT_S = 30


@dataclass(frozen=True, slots=True)
class StartPoint:
    offset: int
    closed: ClosedOffsets  # offsets past ``offset`` the previous owner had closed


def start_points(
    consumer: Consumer, topic: str, committed: list[TopicPartition]
) -> dict[int, StartPoint]:
    """Each partition's start point, from its ``committed`` offset and
    metadata (the owner fetched them, stable: partition_owner.py)."""
    starts = {tp.partition: tp.offset for tp in committed if tp.offset >= 0}
    starts.update(_log_starts(consumer, topic, [tp.partition for tp in committed if tp.offset < 0]))
    return {
        tp.partition: StartPoint(
            starts[tp.partition],
            ClosedOffsets.from_metadata(tp.metadata, f"{topic}/{tp.partition}"),
        )
        for tp in committed
    }


def _log_starts(consumer: Consumer, topic: str, partitions: list[int]) -> dict[int, int]:
    """The first offset of each partition's log, in one request."""
    if not partitions:
        return {}
    # A time of OFFSET_BEGINNING asks for the log's start (ListOffsets' EARLIEST).
    asked = [TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions]
    found = consumer.offsets_for_times(asked, timeout=LOG_STARTS_TIMEOUT_S)
    if failed := next((tp.error for tp in found if tp.error is not None), None):
        raise KafkaException(failed)
    return {tp.partition: tp.offset for tp in found}
