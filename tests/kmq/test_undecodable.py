"""A record whose headers confluent-kafka cannot decode (a header name that is
not UTF-8, issue 17): QueueClient rejects it at once and the tracker moves it
to the DLQ; nothing crashes and the partition goes on."""

import logging

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from kmqadmin.kafka.client.config import consumer_config, producer_config
from kmqadmin.kmq import QueueClient, QueueConfig, RedeliveryTracker, markers
from kmqadmin.kmq import headers as h
from tests.kafka_helpers import read_all
from tests.process import wait_for
from tests.queue_helpers import dlq, poll_until
from tests.raw_produce import RawRecord, produce_raw

POISON = RawRecord(b"\x00poison", key=b"\xfekey", headers=[(b"\xff", b"x")], timestamp=1234)


def committed(queue: QueueConfig, partition: int) -> int:
    consumer = Consumer(consumer_config(queue.bootstrap_servers, queue.group_id))
    try:
        [tp] = consumer.committed([TopicPartition(queue.topic, partition)], timeout=10)
        return tp.offset
    finally:
        consumer.close()


def assert_dead_as_undecodable(queue: QueueConfig, offset: int) -> None:
    [dead] = wait_for(lambda: dlq(queue), 20, "the DLQ record")
    assert (dead.key(), dead.value(), dead.timestamp()[1]) == (POISON.key, POISON.value, 1234)
    assert h.find(dead.headers(), h.DLQ_REASON) == b"undecodable"
    assert h.find(dead.headers(), h.MESSAGE_ID) == f"{queue.topic}/0/{offset}".encode()


def test_poll_rejects_it_and_delivers_the_rest_of_the_batch(
    queue: QueueConfig, tracker: RedeliveryTracker, caplog: pytest.LogCaptureFixture
) -> None:
    good = [RawRecord(b"a", headers=[(b"t", b"1")]), RawRecord(b"b")]
    produce_raw(queue.bootstrap_servers, queue.topic, [good[0], POISON, good[1]])

    with caplog.at_level(logging.WARNING), QueueClient(queue) as client:
        got = poll_until(client, 2)
        assert [m.value for m in got] == [b"a", b"b"]
        assert got[0].headers == [("t", b"1")]
        assert client.malformed == 1
        client.flush()  # the compact format commits with it, kmq's within poll()
        assert committed(queue, 0) == 3
        for m in got:
            client.ack(m)
    assert f"{queue.topic}/0/1: headers undecodable" in caplog.text
    written = [
        found
        for r in read_all(queue, queue.markers_topic)
        if (found := markers.decode(r.key(), r.value(), r.timestamp()[1])).first <= 1 <= found.last
    ]  # the markers of offset 1: its own, or a compact range's over the batch
    kinds = [m.kind for m in written]
    assert kinds[:2] == [markers.MarkerType.START, markers.MarkerType.REJECT]
    assert written[1].reason == b"undecodable"
    assert kinds[2:] in ([], [markers.MarkerType.END])  # the tracker's, once it dead-lettered it
    assert_dead_as_undecodable(queue, 1)
    wait_for(lambda: tracker.stats().undecodable == 1, 10, "the tracker's count")
    assert tracker.stats().redelivered == 0


def test_a_started_one_timing_out_goes_to_the_dlq_not_round_again(
    queue: QueueConfig, tracker: RedeliveryTracker
) -> None:
    """As if a client from before this fix had started it: the tracker's copy
    path meets the undecodable record itself."""
    produce_raw(queue.bootstrap_servers, queue.topic, [POISON])
    producer = Producer(producer_config(queue.bootstrap_servers))
    producer.produce(queue.markers_topic, markers.start(0), markers.encode_key(0, 0), partition=0)
    assert producer.flush(10) == 0

    assert_dead_as_undecodable(queue, 0)
    wait_for(lambda: tracker.stats().in_flight == 0, 10, "the message to be closed")
    assert (tracker.stats().undecodable, tracker.stats().redelivered) == (1, 0)
