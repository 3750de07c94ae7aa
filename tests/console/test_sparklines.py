"""The dashboard's sparklines: the workers' own counts, minute by minute,
pushed live as inline SVG."""

import re

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from confluent_kafka import Producer

from kmqadmin.console.models import Queue
from kmqadmin.console.services.queues.sparklines import HEIGHT, MINUTES, _points, sparklines
from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kmq import QueueClient, RedeliveryTracker, names
from kmqadmin.kmq.share.counts import MINUTE_MS, ShareCounts, minute_of
from kmqadmin.workers.counts import CountPublisher
from tests.console.test_live import connect, receive_until
from tests.process import wait_for
from tests.queue_helpers import poll_until, send
from tests.users import user_with

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def test_points_span_the_width_and_the_busiest_minute_is_the_top() -> None:
    assert _points((0, 0, 0), 1) == "0.0,23.0 60.0,23.0 120.0,23.0"
    assert _points((0, 4, 2), 4) == "0.0,23.0 60.0,1.0 120.0,12.0"
    assert _points((2**62, 0), 2**62).startswith("0.0,1.0")


def test_acks_redeliveries_and_dead_letters_counted_by_the_tracker_reach_the_live_dashboard(
    registered: Queue,
) -> None:
    config = registered.config()
    tracker = RedeliveryTracker(config)
    tracker.start()
    try:
        send(config, 5)
        with QueueClient(config) as worker:
            got = poll_until(worker, 5)
            worker.ack_all(got[:3])
            worker.reject(got[3], "bad")
            worker.release(got[4])
            worker.flush()
            wait_for(
                lambda: (s := tracker.stats()).acked == 3 and s.dead_lettered and s.redelivered,
                30,
                "the acks, the reject and the release applied",
            )
        CountPublisher().publish({"t": tracker})
    finally:
        tracker.stop()
    lines = {line.series: line for line in sparklines(registered)}
    assert {s: len(line.counts) for s, line in lines.items()} == {
        "acked": MINUTES, "redelivered": MINUTES, "dead_lettered": MINUTES
    }  # fmt: skip
    assert (lines["redelivered"].total, lines["dead_lettered"].total) == (1, 1)
    assert lines["acked"].total == 3

    async def scenario() -> str:
        viewer = await database_sync_to_async(user_with)("viewer")
        socket = connect("/ws/dashboard/", viewer)
        assert (await socket.connect())[0]
        try:
            return await receive_until(socket, 'data-series="acked"', 20)
        finally:
            await socket.disconnect()

    frame = async_to_sync(scenario)()
    dead = re.search(r'data-series="dead_lettered" data-counts="([\d,]+)" points="([^"]+)"', frame)
    assert dead and sum(map(int, dead[1].split(","))) == 1
    assert len(dead[2].split()) == MINUTES
    assert f",{HEIGHT - 1:.1f}" in dead[2]  # the quiet minutes lie on the baseline
    assert "dead-lettered 1" in frame


def test_a_share_queues_sparklines_come_from_its_clients_counts(registered: Queue) -> None:
    """No tracker counts a share queue: its clients' counts topic does."""
    Queue.objects.filter(pk=registered.pk).update(backend="share")
    queue = Queue.objects.get(pk=registered.pk)
    counts = names.counts_topic(queue.topic)
    ensure_topics(queue.config().bootstrap_servers, {counts: 1})
    now = now_ms()
    producer = Producer({"bootstrap.servers": queue.config().bootstrap_servers})
    minute = ShareCounts(minute_of(now), accepted=4, released=1, delayed=2, dead_lettered=1)
    producer.produce(counts, minute.encode(), b"client", timestamp=now)
    assert producer.flush(10) == 0
    while True:  # read within one minute, so the record's column is known
        drawn_in = minute_of(now_ms())
        lines = {line.series: line for line in sparklines(queue)}
        if minute_of(now_ms()) == drawn_in:
            break
    column = -1 - (drawn_in - minute.minute) // MINUTE_MS  # the last, unless a minute turned
    assert {s: (line.counts[column], line.total) for s, line in lines.items()} == {
        "acked": (4, 4), "redelivered": (3, 3), "dead_lettered": (1, 1)
    }  # fmt: skip
