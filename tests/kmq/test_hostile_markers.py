"""Marker records no client of ours writes: the tracker counts, logs and skips
them and goes on tracking (it crash-looped on OverflowError, issue 17, and
stalled a partition on a START naming a negative offset, issue 16)."""

import logging

import pytest

from kmqadmin.kmq import QueueClient, QueueConfig, RedeliveryTracker, markers
from tests.process import wait_for
from tests.queue_helpers import poll_until, send
from tests.raw_produce import RawRecord, produce_raw


def test_a_start_whose_deadline_overflows_is_skipped_and_tracking_goes_on(
    queue: QueueConfig, tracker: RedeliveryTracker, caplog: pytest.LogCaptureFixture
) -> None:
    hostile = [  # a START at timestamp -1 (none) whose timeout takes it below int64
        RawRecord(markers.start(-(2**63)), key=markers.encode_key(0, 5), timestamp=-1),
        RawRecord(b"\x07garbage", key=markers.encode_key(0, 6)),
        RawRecord(markers.END, key=b"short"),
    ]
    offsets = produce_raw(queue.bootstrap_servers, queue.markers_topic, hostile)

    with caplog.at_level(logging.WARNING):
        wait_for(lambda: tracker.stats().skipped == 3, 20, "three skipped markers")
    assert f"skipped marker {queue.markers_topic}/0/{offsets[0]}: START timeout" in caplog.text
    send(queue, 1)
    with QueueClient(queue) as client:
        [first] = poll_until(client, 1)
        [again] = poll_until(client, 1, timeout=20)  # the tracker still redelivers
        assert (again.id, again.delivery_count) == (first.id, 2)
        client.ack(again)


def test_a_start_for_a_negative_offset_is_skipped_and_its_partition_goes_on(
    queue: QueueConfig, tracker: RedeliveryTracker, caplog: pytest.LogCaptureFixture
) -> None:
    """Opened, it fell due at once, its read-back failed, and the rebuild
    read it again: the partition redelivered nothing any more (found by the
    hostile-records fuzz test)."""
    hostile = RawRecord(markers.start(0), key=markers.encode_key(0, -261), partition=0)
    [at] = produce_raw(queue.bootstrap_servers, queue.markers_topic, [hostile])

    with caplog.at_level(logging.WARNING):
        wait_for(lambda: tracker.stats().skipped == 1, 20, "the skipped START")
    assert f"skipped marker {queue.markers_topic}/0/{at}: START for queue offset -261" in (
        caplog.text
    )
    send(queue, 1, partition=0)
    with QueueClient(queue) as client:
        [first] = poll_until(client, 1)
        [again] = poll_until(client, 1, timeout=20)
        assert (again.id, again.delivery_count) == (first.id, 2)
        client.ack(again)
