"""Marker records no client of ours writes: the tracker counts, logs and skips
them and goes on tracking (it crash-looped on OverflowError, issue 17, and
stalled a partition on a START naming a negative offset, issue 16)."""

import logging

import pytest

from kmqadmin.kmq import InFlightView, QueueClient, QueueConfig, RedeliveryTracker, markers
from tests.process import wait_for
from tests.queue_helpers import poll_until, send
from tests.raw_produce import RawRecord, produce_raw


def test_a_start_whose_deadline_overflows_is_skipped_and_tracking_goes_on(
    queue: QueueConfig, tracker: RedeliveryTracker, caplog: pytest.LogCaptureFixture
) -> None:
    hostile = [  # a START at timestamp -1 (none) whose timeout takes it below int64
        RawRecord(markers.start(-(2**63)), key=markers.encode_key(0, 5), timestamp=-1),
        RawRecord(b"\x09garbage", key=markers.encode_key(0, 6)),
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


def test_bad_ranges_are_skipped_by_the_tracker_and_the_view_and_nothing_stalls(
    queue: QueueConfig, tracker: RedeliveryTracker, caplog: pytest.LogCaptureFixture
) -> None:
    """Compact range markers no client of ours writes: reversed, longer than
    a range may be, truncated, and below offset 0."""
    hostile = [
        RawRecord(markers.start_range(1000, 4), key=markers.encode_key(0, 5), partition=0),
        RawRecord(markers.end_range(5 + markers.MAX_SPAN), key=markers.encode_key(0, 5)),
        RawRecord(markers.start_range(1000, 9)[:12], key=markers.encode_key(0, 5), partition=0),
        RawRecord(markers.start_range(1000, 9), key=markers.encode_key(0, -3), partition=0),
    ]
    view = InFlightView(queue)  # before them: it reads from the trackers' commit on
    offsets = produce_raw(queue.bootstrap_servers, queue.markers_topic, hostile)
    try:
        with caplog.at_level(logging.WARNING):
            wait_for(lambda: tracker.stats().skipped == 4, 20, "four skipped ranges")
        assert f"skipped marker {queue.markers_topic}/0/{offsets[0]}: range 5..4 is empty" in (
            caplog.text
        )
        wait_for(lambda: view.refresh() or view.skipped == 4, 20, "the view skipping them too")
        assert view.count() == 0
        send(queue, 1, partition=0)
        with QueueClient(queue) as client:
            [first] = poll_until(client, 1)
            [again] = poll_until(client, 1, timeout=20)  # the tracker still redelivers
            assert (again.id, again.delivery_count) == (first.id, 2)
            client.ack(again)
    finally:
        view.close()
