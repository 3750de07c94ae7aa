"""OffsetReader: records by offset, absent when there is none to wait for."""

import logging

from kmqadmin.kafka.admin.log_offsets import LogAdmin
from kmqadmin.kafka.admin.offset_reader import OffsetReader
from kmqadmin.kafka.client.client_log import LOGGER
from kmqadmin.kafka.embedded.broker import free_port
from kmqadmin.kmq import QueueConfig
from tests.process import wait_for
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


def test_offsets_deleted_before_the_log_start_are_absent_not_waited_for(
    queue: QueueConfig,
) -> None:
    """A purge (DeleteRecords) moves the log start to the end: the reader's
    position is reset there and stays unknown, no record coming, so before
    it waited for its whole timeout and raised ReadTimeout, and the tracker
    took three of those per partition to skip a purged in-flight message."""
    send(queue, 5, partition=0)
    logs = LogAdmin(queue.bootstrap_servers).logs
    logs.delete_before({(queue.topic, 0): 5})
    reader = OffsetReader(queue.bootstrap_servers, queue.topic, "reader", timeout=5.0)
    try:
        gone = reader.read(0, [0, 1, 2])
        send(queue, 1, partition=0)
        kept = reader.read(0, [1, 5])
    finally:
        reader.close()
    assert gone == {}
    assert sorted(kept) == [5]


def test_an_idle_reader_logs_a_broker_away_when_it_happens() -> None:
    """Between reads nobody polls a reader, and confluent-kafka hands log
    lines over only on a poll: before, a refusal came out at the next read or
    at close, minutes late and stamped then (`kmq run` printed one after
    Ctrl-C, from an outage a minute before)."""
    away = f"127.0.0.1:{free_port()}"
    said: list[logging.LogRecord] = []
    handler = _Keep(said)
    LOGGER.addHandler(handler)
    reader = OffsetReader(away, "t", "reader")
    try:
        wait_for(lambda: any(_refused(r, away) for r in said), 10, "the refusal logged")
    finally:
        LOGGER.removeHandler(handler)
        reader.close()


class _Keep(logging.Handler):
    def __init__(self, into: list[logging.LogRecord]) -> None:
        super().__init__()
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record)


def _refused(record: logging.LogRecord, broker: str) -> bool:
    return broker in record.getMessage() and "Connection refused" in record.getMessage()
