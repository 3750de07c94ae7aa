"""Replay a range of a queue, and purge it, against the real broker."""

import pytest

from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kmq import InFlightView, QueueClient, QueueConfig, QueueGauges, replay
from kmqadmin.kmq import headers as h
from kmqadmin.kmq.replay import Replayer, purge
from tests.kafka_helpers import count_reads, fill
from tests.process import wait_for
from tests.queue_helpers import poll_until, send


def test_replay_by_offsets_and_by_time(queue: QueueConfig) -> None:
    send(queue, 6, partition=0)
    middle = now_ms()
    wait_for(lambda: now_ms() > middle + 5, 1, "the clock to move")
    send(queue, 4, partition=0)
    replayer = Replayer(queue)
    try:
        by_time = replayer.spans(since_ms=middle)
        sent = sum(n for span in by_time for _, n in list(replayer.replay(span))[-1:])
        assert sent == 4  # the second batch only, on partition 0; the others are empty
        [by_offset] = replayer.spans(partition=0, start=2, end=5)
        assert (by_offset.start, by_offset.end, by_offset.size) == (2, 5, 3)
        assert list(replayer.replay(by_offset))[-1][1] == 3
    finally:
        replayer.close()
    with QueueClient(queue) as client:
        got = poll_until(client, 17)
    # Originals carry no kmq-id header (their id is their coordinates); copies do.
    copies = [m for m in got if h.find(m.headers, h.MESSAGE_ID) is not None]
    assert sorted(m.value for m in copies) == sorted(
        [b"m2", b"m3", b"m4", b"m0", b"m1", b"m2", b"m3"]
    )
    first_copy = next(m for m in copies if m.value == b"m4")
    assert first_copy.id == f"{queue.topic}/0/4"  # the original's id: one story
    assert first_copy.delivery_count == 1
    assert all(h.find(m.headers, h.REDELIVERY_COUNT) is None for m in copies)


def test_purge_moves_the_group_past_everything_and_acks_what_is_in_flight(
    queue: QueueConfig,
) -> None:
    send(queue, 8)
    with QueueClient(queue) as client:
        taken = poll_until(client, 3, timeout=30)[:3]
        assert taken
    done = purge(queue)
    assert done["acked"] >= len(taken)
    gauges = QueueGauges(queue)
    view = InFlightView(queue)
    try:
        assert gauges.depth() == 0
        wait_for(lambda: view.refresh() or view.count() == 0, 20, "nothing in flight")
    finally:
        gauges.close()
        view.close()


def test_replay_by_time_reads_only_the_records_in_the_window(
    queue: QueueConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    since = now_ms() - 600_000
    until = since + 300_000
    fill(
        queue,
        queue.topic,
        [
            *((b"before %d" % i, since - 3_600_000 + i) for i in range(100_000)),
            *((b"in %d" % i, since + i) for i in range(50)),
            *((b"after %d" % i, until + i) for i in range(1000)),
        ],
    )
    handed = count_reads(monkeypatch, replay)
    replayer = Replayer(queue)
    try:
        [span] = replayer.spans(partition=0, since_ms=since, until_ms=until)
        assert (span.start, span.end) == (100_000, 100_050)
        assert list(replayer.replay(span))[-1][1] == 50
    finally:
        replayer.close()
    assert sorted(o for _, _, o in handed) == list(range(100_000, 100_050))
