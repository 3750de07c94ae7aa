"""The test-only raw producer writes what it is given, byte for byte."""

from kmqadmin.kmq import QueueConfig
from tests.kafka_helpers import read_all
from tests.raw_produce import RawRecord, produce_raw


def test_key_value_partition_timestamp_and_headers_arrive_as_given(queue: QueueConfig) -> None:
    records = [
        RawRecord(b"v0", key=b"k0", headers=[(b"a", b"1"), (b"b", None)], partition=1),
        RawRecord(None, key=None, partition=2, timestamp=1_700_000_000_000),
    ]

    offsets = produce_raw(queue.bootstrap_servers, queue.topic, records)

    assert offsets == [0, 0]
    got = {r.partition(): r for r in read_all(queue, queue.topic)}
    assert (got[1].key(), got[1].value()) == (b"k0", b"v0")
    assert got[1].headers() == [("a", b"1"), ("b", None)]
    assert (got[2].key(), got[2].value(), got[2].headers()) == (None, None, None)
    assert got[2].timestamp()[1] == 1_700_000_000_000


def test_a_header_name_that_is_not_utf8_is_written(queue: QueueConfig) -> None:
    produce_raw(queue.bootstrap_servers, queue.topic, [RawRecord(b"v", headers=[(b"\xff", b"x")])])

    (record,) = read_all(queue, queue.topic)
    assert record.value() == b"v"  # headers() of this record is issue 17's bug: not called here
