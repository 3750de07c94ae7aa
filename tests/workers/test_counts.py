"""The trackers' counts reach the dashboard's per-minute rows, once each."""

import pytest

from kmqadmin.console.models import Queue, QueueMinute
from kmqadmin.console.services.queues.stats import RATE_MINUTES, rates
from kmqadmin.kmq import QueueClient, RedeliveryTracker
from kmqadmin.workers.counts import CountPublisher
from tests.process import wait_for
from tests.queue_helpers import poll_until, send

pytestmark = pytest.mark.django_db


def test_counts_are_added_as_deltas_per_queue_and_minute(registered: Queue) -> None:
    config = registered.config()
    tracker = RedeliveryTracker(config)
    tracker.start()
    try:
        send(config, 2)
        with QueueClient(config) as worker:
            first, second = poll_until(worker, 2)
            worker.reject(first, "bad")
            worker.release(second)
            wait_for(
                lambda: tracker.stats().dead_lettered == 1 and tracker.stats().redelivered == 1,
                30,
                "the reject and the release applied",
            )
        publisher = CountPublisher()
        publisher.publish({"t": tracker})
        publisher.publish({"t": tracker})  # nothing new: nothing added
    finally:
        tracker.stop()
    [row] = QueueMinute.objects.filter(queue=registered)
    assert (row.redelivered, row.dead_lettered) == (1, 1)
    assert rates(registered) == {
        "redelivered_per_min": round(1 / RATE_MINUTES, 1),
        "dead_lettered_per_min": round(1 / RATE_MINUTES, 1),
    }
