"""OffsetReader: records by offset, absent when there is none to wait for."""

from kmqadmin.kafka.offset_reader import OffsetReader
from kmqadmin.kmq import QueueConfig
from tests.queue_helpers import send


def test_offsets_past_the_end_are_absent_not_a_read_timeout(queue: QueueConfig) -> None:
    send(queue, 2, partition=0)
    reader = OffsetReader(queue.bootstrap_servers, queue.topic, "reader", timeout=10.0)
    try:
        found = reader.read(0, [1, 2, 10**12])  # before: ReadTimeout after 10 s
    finally:
        reader.close()
    assert sorted(found) == [1] and found[1].value() == b"m1"
