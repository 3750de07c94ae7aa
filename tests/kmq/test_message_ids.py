"""A kmq-id header any producer can write: a worker reads the id of every
record, and one that is not a kmq-id is ignored, counted and logged."""

import logging

import pytest

from kmqadmin.kmq import QueueClient, QueueConfig, QueueProducer, RedeliveryTracker
from kmqadmin.kmq import headers as h
from tests.queue_helpers import poll_until

NOT_IDS = [b"\x93", b"", b"forged", b"q/01/2", b"q/0/99999999999999999999", "q/\u0660/1".encode()]


@pytest.mark.parametrize("claimed", NOT_IDS)
def test_a_header_that_is_no_kmq_id_gives_way_to_the_coordinates(claimed: bytes) -> None:
    found = h.stable_id([(h.MESSAGE_ID, claimed)], "q", 1, 7)
    assert found == b"q/1/7"


def test_a_kmq_id_header_is_the_id_of_every_copy() -> None:
    assert h.stable_id([(h.MESSAGE_ID, b"q/0/3")], "q", 0, 9) == b"q/0/3"
    assert h.stable_id([], "q", 0, 9) == b"q/0/9"


def test_a_worker_reads_the_id_of_a_record_whose_kmq_id_is_not_utf8(
    queue: QueueConfig, tracker: RedeliveryTracker, caplog: pytest.LogCaptureFixture
) -> None:
    producer = QueueProducer(queue)
    producer.send(value=b"v", headers={h.MESSAGE_ID: b"\x93"}, partition=0)
    producer.send(value=b"w", headers={h.MESSAGE_ID: b"forged"}, partition=0)
    producer.flush()
    with (
        caplog.at_level(logging.WARNING, "kmqadmin.kmq.client.queue_client"),
        QueueClient(queue) as client,
    ):
        taken = poll_until(client, 2)
        assert [m.id for m in taken] == [f"{queue.topic}/0/{m.offset}" for m in taken]
        assert client.malformed == 2
        assert f"{queue.topic}/0/{taken[0].offset}: kmq-id b'\\x93' is no kmq-id" in caplog.text
        client.release(taken[0])
        # Its copy carries the id the worker saw: the story stays one message's.
        [copy] = poll_until(client, 1)
        assert (copy.id, copy.delivery_count) == (taken[0].id, 2)
        assert client.malformed == 2
        for m in (copy, taken[1]):
            client.ack(m)
