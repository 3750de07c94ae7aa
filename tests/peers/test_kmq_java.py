"""SoftwareMill kmq's own Java client (0.2, jvm/kmq) and ours on one broker.

kmq 0.2 is what Maven Central serves here (core_2.13 0.3.x is a 404); it
predates record headers, so its tracker copies key and value only.
"""

import time
from collections import Counter
from collections.abc import Callable

from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import (
    Message,
    QueueClient,
    QueueConfig,
    QueueProducer,
    RedeliveryTracker,
    markers,
)
from kmqadmin.kmq import headers as h
from tests.kafka_helpers import read_all
from tests.peers.conftest import KmqPeer
from tests.process import wait_for
from tests.queue_helpers import poll_until, send

TIMEOUT_MS = 1000  # the queue fixture's message_timeout_ms; kmq's is set to the same


def stays(condition: Callable[[], object], seconds: float, what: str) -> None:
    """``condition`` holds throughout ``seconds``: for what must not happen."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        assert condition(), what
        time.sleep(0.1)


def start_times(queue: QueueConfig) -> dict[tuple[int, int], int]:
    """(queue partition, offset) -> timestamp of its first start marker."""
    found: dict[tuple[int, int], int] = {}
    for r in read_all(queue, queue.markers_topic):
        if r.value()[:1] == b"\x01":
            found.setdefault(markers.decode_key(r.key()), r.timestamp()[1])
    return found


def consume(kmq_peer: Callable[..., KmqPeer], queue: QueueConfig, **options: str) -> KmqPeer:
    """kmq's KmqClient on ``queue``; ``skip="m1,m2"`` leaves those first deliveries unacked."""
    return kmq_peer(
        "consume",
        bootstrap=queue.bootstrap_servers,
        topic=queue.topic,
        markers=queue.markers_topic,
        group=queue.group_id,
        timeout_ms=TIMEOUT_MS,
        **options,
    )


def test_kmq_client_with_our_tracker(
    queue: QueueConfig, tracker: RedeliveryTracker, kmq_peer: Callable[..., KmqPeer]
) -> None:
    """kmq's KmqClient consumes; ours redelivers what it did not ack."""
    skipped = {"m1", "m4", "m7"}
    send(queue, 10, headers={"trace": b"abc"})
    peer = consume(kmq_peer, queue, skip=",".join(sorted(skipped)))
    peer.wait_for(lambda: len(peer.records()) >= 13, 60, "10 messages and 3 copies at kmq")
    wait_for(
        lambda: tracker.stats().in_flight == 0 and tracker.stats().redelivered >= 3,
        20,
        "our tracker to see every message acked",
    )
    # Acked messages are never redelivered: past two more timeouts, nothing else came.
    stays(lambda: len(peer.records()) == 13, 2 * TIMEOUT_MS / 1000, "no further delivery")
    peer.kill()

    seen = peer.records()
    assert Counter(r["value"] for r in seen) == {
        f"m{i}": 2 if f"m{i}" in skipped else 1 for i in range(10)
    }
    copies = [r for r in seen if h.REDELIVERY_COUNT in dict(r["headers"])]
    firsts = {r["value"]: r for r in seen if r not in copies}
    assert all(r["headers"] == [["trace", b"abc".hex()]] for r in firsts.values())
    assert sorted(c["value"] for c in copies) == sorted(skipped)
    started = start_times(queue)
    for copy in copies:
        first = firsts[copy["value"]]
        assert (copy["partition"], copy["key"]) == (first["partition"], first["key"])
        assert copy["offset"] > first["offset"]
        # Our tracker read kmq's start marker as kmq means it: due a timeout after it.
        assert copy["timestamp"] >= started[first["partition"], first["offset"]] + TIMEOUT_MS
        assert dict(copy["headers"]) == {
            "trace": b"abc".hex(),
            h.REDELIVERY_COUNT: "01",  # kmq's encoding of 1
            h.MESSAGE_ID: f"{queue.topic}/{first['partition']}/{first['offset']}".encode().hex(),
        }
        assert copy["acked"]
    stats = tracker.stats()
    assert (stats.redelivered, stats.dead_lettered, stats.skipped) == (3, 0, 0)
    assert len(read_all(queue, queue.topic)) == 13  # nothing lost, nothing extra
    assert read_all(queue, queue.dlq_topic) == []


def test_our_client_with_kmq_tracker(queue: QueueConfig, kmq_peer: Callable[..., KmqPeer]) -> None:
    """Our QueueClient consumes; kmq's RedeliveryTracker redelivers what it did not ack.

    kmq 0.2 copies a record's key and value only: the copy has no headers at
    all, so no kmq-redelivery-count (our client counts it a first delivery)
    and no kmq-id (its id is the copy's own coordinates), and the user's
    headers are gone too."""
    kmq_tracker = kmq_peer(
        "track",
        bootstrap=queue.bootstrap_servers,
        topic=queue.topic,
        markers=queue.markers_topic,
        group=queue.tracker_group_id,
        timeout_ms=TIMEOUT_MS,
        use_now_after_ms=500,
    )
    send(queue, 6, headers={"trace": b"abc"})
    with QueueClient(queue) as client:
        firsts = {m.value: m for m in poll_until(client, 6)}
        assert len(firsts) == 6
        for value in (b"m0", b"m2", b"m4"):
            client.ack(firsts[value])
        client.flush()
        copies: list[Message] = []

        def three_copies() -> bool:
            copies.extend(client.poll(500, 0.2))
            return len(copies) >= 3

        kmq_tracker.wait_for(three_copies, 45, "kmq's tracker to redeliver 3 messages")
        for copy in copies:
            client.ack(copy)
        client.flush()
        # Acked ones (originals and copies) are not redelivered: two more timeouts pass quietly.
        stays(lambda: client.poll(10, 0.1) == [], 2 * TIMEOUT_MS / 1000 + 1, "no further delivery")
        kmq_tracker.kill()

    assert sorted(c.value for c in copies) == [b"m1", b"m3", b"m5"]
    started = start_times(queue)
    for copy in copies:
        first = firsts[copy.value]
        assert (copy.key, copy.partition) == (first.key, first.partition)
        assert copy.offset > first.offset
        # kmq's tracker read our start marker's timeout: the copy came after it.
        assert copy.timestamp >= started[first.partition, first.offset] + TIMEOUT_MS
        assert copy.headers == []  # trace, kmq-redelivery-count and kmq-id: all dropped
        assert copy.delivery_count == 1
        assert copy.id == f"{queue.topic}/{copy.partition}/{copy.offset}" != first.id
    # kmq ended each redelivered original with its own end marker.
    ends = Counter(
        markers.decode_key(r.key())
        for r in read_all(queue, queue.markers_topic)
        if r.value() == markers.END
    )
    for m in firsts.values():
        assert ends[(m.partition, m.offset)] == 1, m
    assert len(read_all(queue, queue.topic)) == 9


def test_markers_are_byte_identical(
    kafka: EmbeddedBroker, topic: str, kmq_peer: Callable[..., KmqPeer]
) -> None:
    """The same message (partition 1, offset 0) consumed and acked by kmq's client
    and by ours: the same key, start and end marker bytes."""
    theirs, ours = (
        QueueConfig(
            bootstrap_servers=kafka.bootstrap_servers,
            topic=f"{topic}-{who}",
            group_id=f"{topic}-{who}-workers",
            message_timeout_ms=TIMEOUT_MS,
            marker_format="kmq",
        )
        for who in ("kmq", "ours")
    )
    for queue in (theirs, ours):
        queue.ensure_topics(partitions=3)
        producer = QueueProducer(queue)
        producer.send(b"m0", key=b"k0", partition=1)
        producer.flush()

    peer = consume(kmq_peer, theirs)
    with QueueClient(ours) as client:
        [message] = poll_until(client, 1)
        client.ack(message)
        client.flush()
    assert (message.partition, message.offset) == (1, 0)

    def marker_bytes(queue: QueueConfig) -> list[tuple[bytes, bytes]]:
        return [
            (r.key(), r.value()) for r in read_all(queue, queue.markers_topic) if r.partition() == 1
        ]

    kmq_markers = peer.wait_for(
        lambda: found if len(found := marker_bytes(theirs)) >= 2 else None,
        60,
        "kmq's start and end markers",
    )
    peer.kill()
    our_markers = marker_bytes(ours)
    key = markers.encode_key(1, 0)
    assert [k for k, _ in kmq_markers] == [k for k, _ in our_markers] == [key, key]
    (_, kmq_start), (_, kmq_end) = kmq_markers
    (_, our_start), (_, our_end) = our_markers
    assert kmq_end == our_end == b"\x00"
    # Both: 0x01 + the message timeout as int64 BE (kmq's StartMarker(msgTimeoutMs)).
    assert kmq_start == our_start == b"\x01" + TIMEOUT_MS.to_bytes(8, "big")
