"""OffsetReader: records by offset, absent when there is none to wait for."""

from kmqadmin.kafka.admin.offset_reader import OffsetReader
from kmqadmin.kmq import QueueConfig
from tests.queue_helpers import send


def test_offsets_outside_the_log_are_absent_not_an_error(queue: QueueConfig) -> None:
    """Past the end: before, a ReadTimeout after 10 s. Negative (a hostile
    marker's): before, assign() refused the run and the tracker rebuilt the
    partition for ever."""
    send(queue, 2, partition=0)
    reader = OffsetReader(queue.bootstrap_servers, queue.topic, "reader", timeout=10.0)
    try:
        found = reader.read(0, [-261, -1, 1, 2, 10**12])
    finally:
        reader.close()
    assert sorted(found) == [1] and found[1].value() == b"m1"
