"""InFlightView and MarkerWriter against the real broker and a real tracker."""

import dataclasses

from confluent_kafka import Producer

from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kmq import (
    InFlightView,
    MarkerWriter,
    QueueClient,
    QueueConfig,
    RedeliveryTracker,
    markers,
)
from kmqadmin.kmq import headers as h
from tests.process import wait_for
from tests.queue_helpers import dlq, poll_until, send
from tests.raw_produce import RawRecord, produce_raw


def open_now(view: InFlightView) -> set[tuple[int, int]]:
    view.refresh()
    return {(d.partition, d.offset) for d in view.page(limit=1000)}


def test_view_follows_deliveries_acks_and_pages_by_offset(queue: QueueConfig) -> None:
    send(queue, 30)
    view = InFlightView(queue)
    try:
        with QueueClient(queue) as client:
            messages = poll_until(client, 30)
            delivered = {(m.partition, m.offset) for m in messages}
            wait_for(lambda: open_now(view) == delivered, 20, "all 30 in flight")
            for m in messages[:10]:
                client.ack(m)
            client.flush()
            acked = {(m.partition, m.offset) for m in messages[:10]}
            wait_for(lambda: open_now(view) == delivered - acked, 20, "the acks seen")
        first = view.page(limit=7)
        second = view.page(limit=7, after=(first[-1].partition, first[-1].offset))
        ordered = sorted(delivered - acked)
        assert [(d.partition, d.offset) for d in first + second] == ordered[:14]
        assert view.count() == 20
    finally:
        view.close()


def test_a_restarted_view_starts_at_the_trackers_committed_offsets(
    queue: QueueConfig, tracker: RedeliveryTracker
) -> None:
    slow = dataclasses.replace(queue, message_timeout_ms=600_000)  # none falls due meanwhile
    send(slow, 12)
    with QueueClient(slow) as client:
        messages = poll_until(client, 12)
        for m in messages[:8]:
            client.ack(m)
    wait_for(lambda: tracker.stats().in_flight == 4, 20, "the tracker to see the acks")
    view = InFlightView(queue)
    try:
        expected = {(m.partition, m.offset) for m in messages[8:]}
        wait_for(lambda: open_now(view) == expected, 20, "the four still open")
    finally:
        view.close()


def test_operator_actions_reach_the_tracker(queue: QueueConfig, tracker: RedeliveryTracker) -> None:
    queue_slow = dataclasses.replace(queue, message_timeout_ms=600_000)
    send(queue_slow, 3)
    writer = MarkerWriter(queue_slow)
    view = InFlightView(queue_slow)
    try:
        with QueueClient(queue_slow) as client:
            retried, rejected, extended = sorted(poll_until(client, 3), key=lambda m: m.offset)
            # An operator acts on what the view shows: deliveries whose start
            # markers are written (the compact format hands out before that).
            shown = {(m.partition, m.offset) for m in (retried, rejected, extended)}
            wait_for(lambda: open_now(view) == shown, 20, "the three in flight")
            writer.retry(retried.partition, retried.offset)
            writer.reject(rejected.partition, rejected.offset, "operator said so")
            before = now_ms()
            writer.extend(extended.partition, extended.offset, 120_000)
            again = poll_until(client, 1)
            assert [m.value for m in again] == [retried.value]
            assert again[0].delivery_count == 2
            wait_for(lambda: len(dlq(queue_slow)) == 1, 20, "the rejected one in the DLQ")
            assert dlq(queue_slow)[0].value() == rejected.value
            copy = wait_for(lambda: view.refresh() or view.find(retried.id), 20, "the copy")
            assert (copy.partition, copy.offset) == (again[0].partition, again[0].offset)
            assert h.find(again[0].headers, h.MESSAGE_ID) == retried.id.encode()
            found = view.get(extended.partition, extended.offset)
            assert found is not None and found.deadline_ms >= before + 120_000
    finally:
        view.close()


def test_find_refuses_ids_of_other_queues_and_garbage(queue: QueueConfig) -> None:
    view = InFlightView(queue)
    try:
        assert view.find("other-topic/0/1") is None
        assert view.find("no-slashes") is None
        assert view.find(f"{queue.topic}/x/1") is None
    finally:
        view.close()


def test_markers_naming_no_delivery_of_their_partition_are_skipped(queue: QueueConfig) -> None:
    """A START for another queue partition, or a negative offset, would have
    every page read a record that cannot exist (a 10 s wait, then a 503); one
    whose deadline overflows int64 is the tracker's skip too."""
    producer = Producer({"bootstrap.servers": queue.bootstrap_servers})
    for partition, offset in ((-(2**31) + 1, 5), (1, 5), (0, -7)):
        key = markers.encode_key(partition, offset)
        producer.produce(queue.markers_topic, markers.start(60_000), key, partition=0)
    producer.flush(10)
    overflowing = RawRecord(markers.start(-(2**63)), key=markers.encode_key(0, 8), timestamp=-1)
    produce_raw(queue.bootstrap_servers, queue.markers_topic, [overflowing])
    view = InFlightView(queue)
    try:
        wait_for(lambda: view.refresh() or view.skipped == 4, 20, "the four skipped")
        assert view.page() == []
    finally:
        view.close()


def test_catch_up_reads_every_marker_written_before_it_transactions_included(
    queue: QueueConfig,
) -> None:
    """What a backend switch relies on: a view that has read nothing yet
    (a refresh with no time) holds every open delivery after catch_up, and
    gets to the end of a markers partition that holds the tracker's
    transaction markers (a rejected message moved to the DLQ in one)."""
    config = dataclasses.replace(queue, message_timeout_ms=600_000)  # nothing times out
    tracker = RedeliveryTracker(config)
    tracker.start()
    try:
        send(config, 2)
        with QueueClient(config) as client:
            rejected, kept = poll_until(client, 2)
            client.reject(rejected, reason="to leave a transaction behind")
            wait_for(lambda: dlq(config), 20, "the tracker's transaction")
            view = InFlightView(config)
            try:
                view.refresh(budget_s=0)
                assert view.count() == 0
                assert view.catch_up(10)
                assert {(d.partition, d.offset) for d in view.page()} == {
                    (kept.partition, kept.offset)
                }
            finally:
                view.close()
    finally:
        tracker.stop()
