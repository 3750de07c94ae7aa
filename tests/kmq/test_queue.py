"""QueueClient and RedeliveryTracker against the real broker."""

import dataclasses
import random
import time
from collections import Counter

from confluent_kafka import Consumer, Producer, TopicPartition

from kmqadmin.kafka.admin.log_offsets import LogAdmin
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kafka.client.config import consumer_config, producer_config
from kmqadmin.kmq import QueueClient, QueueConfig, QueueProducer, RedeliveryTracker, markers
from kmqadmin.kmq import headers as h
from tests.kafka_helpers import read_all
from tests.process import wait_for
from tests.queue_helpers import dlq, poll_until, send


def test_message_fields_and_ack(queue: QueueConfig, tracker: RedeliveryTracker) -> None:
    send(queue, 1, headers={"trace": b"abc"})
    with QueueClient(queue) as client:
        [m] = poll_until(client, 1)
        assert (m.key, m.value, m.delivery_count) == (b"k0", b"m0", 1)
        assert m.id == f"{queue.topic}/{m.partition}/{m.offset}"
        assert m.headers == [("trace", b"abc")]
        assert m.timestamp > 0
        assert m.timestamp_type.name == "CREATE_TIME"
        client.ack(m)
        client.flush()
        wait_for(lambda: tracker.stats().in_flight == 0, 10, "the ack to reach the tracker")
        assert client.poll(10, 2.5) == []  # past the 1 s timeout: not redelivered
    assert tracker.stats().redelivered == 0


def test_a_poll_hands_out_what_arrived_without_waiting_for_a_full_batch(
    queue: QueueConfig,
) -> None:
    """librdkafka's consume() waits until it holds ``max_messages`` or the
    timeout passes: on a quiet queue a worker got each message a whole
    timeout late. Three messages and a poll for 500 with a 120 s timeout:
    it returns them as soon as they are read, not after the timeout."""
    send(queue, 3)
    with QueueClient(queue) as client:
        got: list = []
        started = time.monotonic()
        while len(got) < 3:  # one partition's fetch may come before another's
            got.extend(client.poll(500, 120))
        assert time.monotonic() - started < 60  # the group join included
        assert sorted(m.value for m in got) == [b"m0", b"m1", b"m2"]
        client.ack_all(got)


def test_records_deleted_after_they_were_fetched_are_not_handed_out(queue: QueueConfig) -> None:
    """A purge (DeleteRecords) moves the logs' first offsets past records a
    client has already fetched into its local queue: they are gone for every
    reader, so this one does not hand them out either once it knows (each
    partition's next fetch reply says, within fetch.wait.max.ms; till then
    they may be, as SQS's PurgeQueue allows); what comes after is."""
    send(queue, 30)
    with QueueClient(queue) as client:
        taken: list = []
        wait_for(lambda: taken.extend(client.poll(1, 0.2)) or taken, 30, "the first message")
        logs = LogAdmin(queue.bootstrap_servers).logs
        purged = logs.delete_before(logs.latest(logs.partitions(queue.topic)))
        wait_for(
            lambda: all(client._log_start(p) >= first for (_, p), first in purged.items()),
            10,
            "every partition's fetch reply after the purge",
        )
        producer = QueueProducer(queue)
        producer.send(value=b"after", key=b"k")
        producer.flush()
        got: list = []
        wait_for(
            lambda: got.extend(client.poll(500, 0.2)) or b"after" in [m.value for m in got],
            30,
            "the message sent after the purge",
        )
        assert [m.value for m in got] == [b"after"]


def test_unacked_message_is_redelivered_with_headers(
    queue: QueueConfig, tracker: RedeliveryTracker
) -> None:
    send(queue, 1, headers={"trace": b"abc"})
    with QueueClient(queue) as client:
        [first] = poll_until(client, 1)
        [copy] = poll_until(client, 1, timeout=15)
        assert copy.delivery_count == 2
        assert copy.id == first.id
        assert (copy.key, copy.value) == (first.key, first.value)
        assert ("trace", b"abc") in copy.headers
        assert h.find(copy.headers, h.REDELIVERY_COUNT) == b"\x01"
        client.ack(copy)


def test_the_tracker_ends_what_it_redelivers_in_the_queues_format(
    queue: QueueConfig, tracker: RedeliveryTracker
) -> None:
    """kmq's format: an END per message copied, as kmq's own tracker writes
    them; compact: an end range per run of what fell due together."""
    send(queue, 60)
    with QueueClient(queue) as client:
        first = poll_until(client, 60)
        copies = poll_until(client, 60, timeout=15)
    assert sorted(m.id for m in copies) == sorted(m.id for m in first)
    handed = {(m.partition, m.offset) for m in first}
    ends = [
        marker
        for r in read_all(queue, queue.markers_topic)
        if (marker := markers.decode(r.key(), r.value(), r.timestamp()[1])).kind
        is markers.MarkerType.END
        and (marker.partition, marker.first) in handed
    ]
    covered = [(e.partition, o) for e in ends for o in range(e.first, e.last + 1)]
    assert sorted(covered) == sorted(handed)  # each once, by the tracker alone
    if queue.marker_format == "kmq":
        assert len(ends) == 60
    else:
        assert len(ends) < 60 and any(e.last > e.first for e in ends)


def test_release_redelivers_now_and_counts(queue: QueueConfig, tracker: RedeliveryTracker) -> None:
    send(queue, 1)
    slow = dataclasses.replace(queue, message_timeout_ms=60_000)
    with QueueClient(slow) as client:
        [m] = poll_until(client, 1)
        released = time.monotonic()
        client.release(m)
        [copy] = poll_until(client, 1, timeout=15)
        assert time.monotonic() - released < 10  # well before the 60 s timeout
        assert copy.delivery_count == 2
        client.ack(copy)


def test_reject_goes_to_dlq_with_reason_and_everything_kept(
    queue: QueueConfig, tracker: RedeliveryTracker
) -> None:
    send(queue, 1, headers={"trace": b"abc"})
    with QueueClient(queue) as client:
        [m] = poll_until(client, 1)
        client.reject(m, reason="bad payload")
    [dead] = wait_for(lambda: dlq(queue), 15, "the DLQ record")
    assert (dead.key(), dead.value()) == (m.key, m.value)
    assert dead.timestamp()[1] == m.timestamp
    record_headers = dead.headers()
    assert ("trace", b"abc") in record_headers
    assert h.find(record_headers, h.DLQ_REASON) == b"rejected"
    assert h.find(record_headers, h.DLQ_DETAIL) == b"bad payload"
    assert h.find(record_headers, h.MESSAGE_ID) == m.id.encode()
    wait_for(lambda: tracker.stats().dead_lettered >= 1, 10, "the tracker's count")
    assert tracker.stats().dead_lettered == 1


def test_extend_pushes_the_deadline(queue: QueueConfig, tracker: RedeliveryTracker) -> None:
    send(queue, 1)
    with QueueClient(queue) as client:
        [m] = poll_until(client, 1)
        client.extend(m, ms=5000)
        client.flush()
        assert client.poll(10, 3.0) == []  # 1 s timeout passed, extension holds
        [copy] = poll_until(client, 1, timeout=10)
        assert copy.delivery_count == 2
        client.ack(copy)


def test_dlq_after_max_redeliveries_not_before(
    queue: QueueConfig, tracker: RedeliveryTracker
) -> None:
    send(queue, 1)
    counts = []
    with QueueClient(queue) as client:
        for _ in range(queue.max_redeliveries + 1):
            [m] = poll_until(client, 1, timeout=15)
            counts.append(m.delivery_count)
            if m.delivery_count <= queue.max_redeliveries:  # the last may expire meanwhile
                assert dlq(queue) == []
    [dead] = wait_for(lambda: dlq(queue), 15, "the DLQ record")
    assert counts == [1, 2, 3, 4]
    assert h.find(dead.headers(), h.DLQ_REASON) == b"max-redeliveries"
    assert h.decode_count(h.find(dead.headers(), h.REDELIVERY_COUNT)) == queue.max_redeliveries


def test_undecodable_marker_is_counted_and_skipped(
    queue: QueueConfig, tracker: RedeliveryTracker
) -> None:
    raw = Producer(producer_config(queue.bootstrap_servers))
    raw.produce(queue.markers_topic, key=b"short", value=b"\x01", partition=0)
    raw.produce(queue.markers_topic, key=b"\x00" * 12, value=b"\x09", partition=0)
    raw.flush(10)
    wait_for(lambda: tracker.stats().skipped == 2, 15, "two skipped markers")
    send(queue, 1)  # and the tracker still works
    with QueueClient(queue) as client:
        poll_until(client, 1)
        [copy] = poll_until(client, 1, timeout=15)
        client.ack(copy)


def test_ten_thousand_messages_ninety_percent_acked(
    queue: QueueConfig, tracker: RedeliveryTracker
) -> None:
    n = 10_000
    send(queue, n)
    rng = random.Random(1)
    acked: Counter[bytes] = Counter()
    deliveries: Counter[bytes] = Counter()
    dead: set[bytes] = set()
    with QueueClient(queue) as client:

        def settled() -> bool:
            for m in client.poll(1000, 0.2):
                deliveries[m.value] += 1
                if rng.random() < 0.9:
                    client.ack(m)
                    acked[m.value] += 1
            if len(acked) + tracker.stats().dead_lettered < n:
                return False
            dead.update(r.value() for r in dlq(queue))
            return len(set(acked) | dead) == n

        wait_for(settled, 120, "every message acked or dead-lettered", every=0)
    assert not set(acked) & dead
    for value in dead:  # only after every redelivery was used
        assert deliveries[value] == queue.max_redeliveries + 1
    assert max(deliveries.values()) <= queue.max_redeliveries + 1
    wait_for(lambda: tracker.stats().dead_lettered >= len(dead), 10, "the tracker's count")
    assert len(dead) == tracker.stats().dead_lettered


def test_a_lagging_tracker_does_not_redeliver_what_was_acked_in_time(queue: QueueConfig) -> None:
    """Start markers, 3,000 other markers, then the end markers, all stamped
    before the deadline and made visible at once (one transaction): a tracker
    reading them in batches of 500 is past the deadline before it reaches the
    end markers, and must not take that for a missed ack."""
    send(queue, 1000, partition=0)
    tracker = RedeliveryTracker(queue, batch_size=500)
    tracker.start()
    try:
        wait_for(lambda: len(tracker.stats().partitions) == 3, 30, "the tracker's partitions")
        wait_for(lambda: tracker.stats().markers_lag == 0, 30, "the tracker caught up")
        stamped = now_ms() - 10_000
        deadline = markers.start(stamped + 100)
        producer = Producer(producer_config(queue.bootstrap_servers, transactional_id=queue.topic))
        producer.init_transactions(10)
        producer.begin_transaction()

        def marker(offset: int, value: bytes, at: int) -> None:
            key = markers.encode_key(0, offset)
            producer.produce(queue.markers_topic, value, key, 0, timestamp=at)

        for offset in range(1000):
            marker(offset, deadline, stamped)
        for offset in range(5000, 6500):  # others' work, acked at once
            marker(offset, deadline, stamped)
            marker(offset, markers.END, stamped)
        for offset in range(1000):
            marker(offset, markers.END, stamped + 50)
        producer.commit_transaction(10)
        end = Consumer(consumer_config(queue.bootstrap_servers, "probe")).get_watermark_offsets(
            TopicPartition(queue.markers_topic, 0), timeout=10
        )[1]
        wait_for(lambda: tracker._states[0].next_offset >= end - 1, 30, "the burst read")
        stats = tracker.stats()
    finally:
        tracker.stop()
    assert (stats.redelivered, stats.skipped, stats.in_flight) == (0, 0, 0)


def test_a_start_marker_past_the_queue_end_is_skipped_not_a_stall(queue: QueueConfig) -> None:
    """Bad input: no record will ever be at that offset. The tracker tries a
    few times (a slow broker looks the same), then counts it and goes on."""
    tracker = RedeliveryTracker(queue, read_timeout=0.5)
    tracker.start()
    try:
        wait_for(lambda: len(tracker.stats().partitions) == 3, 30, "the tracker's partitions")
        producer = Producer(producer_config(queue.bootstrap_servers))
        bogus = markers.encode_key(0, 10_000)
        # In the compact format a range of them: each offset is skipped once.
        start, gone = (
            (markers.start(1), 1)
            if queue.marker_format == "kmq"
            else (markers.start_range(1, 10_499), 500)
        )
        producer.produce(queue.markers_topic, start, bogus, 0)
        producer.flush(10)
        wait_for(lambda: tracker.stats().skipped == gone, 30, "the bogus offsets skipped")
        send(queue, 1, partition=0)
        with QueueClient(queue) as client:
            first = poll_until(client, 1)
            again = poll_until(client, 1)  # not acked: redelivered, the partition moves on
        assert [m.value for m in again] == [m.value for m in first]
        assert again[0].delivery_count == 2
    finally:
        tracker.stop()


def test_keyed_messages_land_where_the_java_partitioner_puts_them(queue: QueueConfig) -> None:
    keys = [f"key-{i}".encode() for i in range(100)]
    ours = QueueProducer(queue)
    java_like = Producer(producer_config(queue.bootstrap_servers, extra={"partitioner": "murmur2"}))
    for key in keys:
        ours.send(value=b"ours", key=key)
        java_like.produce(queue.topic, value=b"java", key=key)
    ours.flush()
    assert java_like.flush(10) == 0
    placed: dict[bytes, dict[bytes, int]] = {b"ours": {}, b"java": {}}
    for record in read_all(queue, queue.topic):
        placed[record.value()][record.key()] = record.partition()
    assert placed[b"ours"] == placed[b"java"]
    assert len(set(placed[b"ours"].values())) == 3  # the keys do spread


def test_a_late_ack_on_kmq_is_accepted_and_the_redelivered_copy_is_delivered(
    queue: QueueConfig, tracker: RedeliveryTracker
) -> None:
    """The kmq backend's answer to a stale ack (docs/queue.md, "Late
    acknowledgements"): an ack is an end marker, never refused; once the
    tracker has redelivered the message, the late ack settles nothing and
    the copy is delivered and acked as usual. Nothing is dead-lettered."""
    send(queue, 1)
    with QueueClient(queue) as client:
        [first] = poll_until(client, 1)
        [copy] = poll_until(client, 1)  # redelivered after the 1 s timeout
        assert (copy.id, copy.delivery_count) == (first.id, 2)
        client.ack(first)  # late: raises nothing
        client.flush()
        client.ack(copy)
        client.flush()
    wait_for(lambda: tracker.stats().in_flight == 0, 30, "nothing in flight")
    assert dlq(queue) == []
