"""A queue whose marker format is switched while deliveries are open: its
markers topic holds both formats, and the tracker, the in-flight view and
the lifecycle read it right (the fixture's format first, then the other)."""

import dataclasses

from kmqadmin.kmq import (
    InFlightView,
    LifecycleFinder,
    QueueClient,
    QueueConfig,
    RedeliveryTracker,
)
from kmqadmin.kmq.config import MARKER_FORMATS
from tests.kafka_helpers import read_all
from tests.process import wait_for
from tests.queue_helpers import poll_until, send

PER_FORMAT = 40


def test_a_switched_queue_reads_both_formats_and_redelivers_exactly_the_unacked(
    queue: QueueConfig,
) -> None:
    """No tracker runs until both formats' markers are written, so nothing
    is redelivered before the view and the lifecycle have read them."""
    before = dataclasses.replace(queue, message_timeout_ms=2000)
    [other] = [f for f in MARKER_FORMATS if f != queue.marker_format]
    after = dataclasses.replace(before, marker_format=other)
    unacked, acked = [], []
    for config in (before, after):
        send(config, PER_FORMAT)
        with QueueClient(config) as client:
            taken = poll_until(client, PER_FORMAT)
            assert len(taken) == PER_FORMAT
            client.ack_all(taken[: PER_FORMAT // 2])
            for message in taken[PER_FORMAT // 2 : -5]:
                client.ack(message)  # one by one: the compact format's ack window
            acked.extend(taken[:-5])
            unacked.extend(taken[-5:])
    markers = read_all(queue, queue.markers_topic)
    kinds = {r.value()[0] for r in markers}
    assert {0x05, 0x01} <= kinds  # a start range and kmq's per-message starts

    view = InFlightView(queue)
    try:
        expected = {(m.partition, m.offset) for m in unacked}

        def open_now() -> set[tuple[int, int]]:
            view.refresh()
            return {(d.partition, d.offset) for d in view.page(limit=1000)}

        wait_for(lambda: open_now() == expected, 20, "the unacked of both formats in flight")
    finally:
        view.close()

    finder = LifecycleFinder(queue)
    try:
        for message in (acked[0], acked[-1]):  # one of each format
            story = finder.find(message.id)
            assert story is not None and story.state == "acked", message
            assert [e.kind for e in story.events] == ["produced", "started", "acked"]
    finally:
        finder.close()

    tracker = RedeliveryTracker(after)
    tracker.start()
    try:
        with QueueClient(after) as client:
            copies = poll_until(client, len(unacked), timeout=60)
            client.ack_all(copies)
            assert sorted(m.id for m in copies) == sorted(m.id for m in unacked)
            assert {m.delivery_count for m in copies} == {2}
            wait_for(lambda: tracker.stats().in_flight == 0, 30, "the copies acked")
            assert client.poll(500, 1.0) == []  # and no second copy of anything
        wait_for(lambda: tracker.stats().redelivered >= len(unacked), 10, "the tracker's count")
        assert tracker.stats().redelivered == len(unacked)
    finally:
        tracker.stop()
