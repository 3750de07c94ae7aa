"""The tracker's read-ahead: originals read before they are due, so a burst of
deadlines waits on no read-back (redeliverer.read_ahead), against the real
broker. The reader is the real one, counted."""

from collections.abc import Iterable

from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.admin.offset_reader import OffsetReader
from kmqadmin.kmq import QueueConfig
from kmqadmin.kmq.tracking.redeliverer import Redeliverer
from tests.raw_produce import RawRecord, produce_raw


class CountedReader:
    """The real reader, saying what it was asked to read."""

    def __init__(self, reader: OffsetReader) -> None:
        self.reader = reader
        self.asked: list[list[int]] = []

    def read(self, partition: int, offsets: Iterable[int]) -> dict[int, KafkaMessage]:
        wanted = list(offsets)
        self.asked.append(wanted)
        return self.reader.read(partition, wanted)

    def close(self) -> None:
        self.reader.close()


def test_read_ahead_serves_what_falls_due_and_lets_go_of_the_rest(queue: QueueConfig) -> None:
    records = [RawRecord(f"m{i}".encode(), key=b"k") for i in range(8)]
    offsets = produce_raw(queue.bootstrap_servers, queue.topic, records)
    redeliverer = Redeliverer(queue, read_timeout=10.0)
    reader = redeliverer._reader = CountedReader(redeliverer._reader)  # type: ignore[assignment]
    try:
        redeliverer.read_soon({0: offsets[:5]})
        redeliverer.read_soon({0: offsets[:6]})  # only the newly due is read
        assert reader.asked == [offsets[:5], offsets[5:6]]

        originals = redeliverer.read_originals(0, offsets[:3])
        assert originals is not None and reader.asked[2:] == []
        assert [originals[o].value() for o in offsets[:3]] == [b"m0", b"m1", b"m2"]

        past_end = offsets[-1] + 100  # a hostile start's offset: read, absent
        redeliverer.read_soon({0: [offsets[4], past_end]})  # offsets[3] was acked meanwhile
        assert reader.asked[2:] == [[past_end]]
        originals = redeliverer.read_originals(0, [offsets[3], offsets[4], past_end])
        assert originals is not None and set(originals) == {offsets[3], offsets[4]}
        assert reader.asked[3:] == [[offsets[3], past_end]]  # let go, and absent: read when due

        redeliverer.read_soon({})  # a partition no longer owned
        assert redeliverer.read_originals(0, [offsets[5]]) is not None
        assert reader.asked[4:] == [[offsets[5]]]
    finally:
        redeliverer.close()
