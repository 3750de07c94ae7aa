"""The web process's receiver on a real broker, with a real tracker: a
message polled for a request that left before it was settled, or stocked
for requests that did not come, reaches a next request uncounted, as SQS
counts only the receives it returns. A compact queue's receiver gives it
back as unseen (a copy with its count kept); a kmq-format one, which
cannot say so, holds it for the next request."""

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest

from bench.common import read_topic
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueClient, QueueConfig, QueueProducer, RedeliveryTracker, markers
from kmqadmin.kmq.message import Message
from kmqadmin.sqs.receiving import receivers
from kmqadmin.sqs.receiving.receipts import Receipt
from kmqadmin.sqs.receiving.settling import settler

TIMEOUT_MS = 6000  # held for a next request up to half of it
SETTLING_S = 2.0  # a slow broker's settling: longer than the request's wait
LATE_S = 1.5  # the client's next request, that much after the message was ready


class SlowlySettled(QueueClient):
    """A QueueClient whose markers reach the broker SETTLING_S late once
    ``slow`` is set, as under a stalled broker: the request that asked for
    the poll's messages gives up first."""

    slow = threading.Event()

    def flush(self, timeout: float = 30.0) -> None:
        if self.slow.is_set():
            time.sleep(SETTLING_S)
        super().flush(timeout)


@pytest.fixture(params=["kmq", "compact"])
def queue(
    kafka: EmbeddedBroker, topic: str, request: pytest.FixtureRequest
) -> Iterator[QueueConfig]:
    config = QueueConfig(
        kafka.bootstrap_servers,
        topic,
        f"{topic}-workers",
        message_timeout_ms=TIMEOUT_MS,
        marker_format=request.param,
    )
    config.ensure_topics(partitions=1)
    tracker = RedeliveryTracker(config)
    tracker.start()
    try:
        yield config
    finally:
        tracker.stop()


def test_a_message_polled_for_a_request_that_left_goes_to_the_next_uncounted(
    queue: QueueConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(receivers, "QueueClient", SlowlySettled)
    SlowlySettled.slow.clear()
    receiver = receivers.Receiver(queue)
    producer = QueueProducer(queue)

    async def run() -> None:
        producer.send(b"warm-up")
        producer.flush()
        [warm] = await receiver.receive(1, 20)  # the client has joined its group
        await asyncio.to_thread(delete, queue, warm)
        SlowlySettled.slow.set()
        producer.send(b"late")
        producer.flush()
        assert await receiver.receive(1, 1) == []  # left while it was settled
        await asyncio.sleep(SETTLING_S - 1 + LATE_S)  # a slow client's next request
        SlowlySettled.slow.clear()
        [late] = await receiver.receive(1, 10)
        assert (late.value, late.delivery_count) == (b"late", 1)
        # Its deadline was counted from its start (held) or is a copy's
        # (given back): handed out, it is a whole timeout from now, so past
        # the first deadline nothing comes back.
        waited = time.monotonic()
        assert await receiver.receive(1, TIMEOUT_MS / 1000 - SETTLING_S) == []
        assert time.monotonic() - waited >= TIMEOUT_MS / 1000 - SETTLING_S
        await asyncio.to_thread(delete, queue, late)

    try:
        asyncio.run(run())
    finally:
        producer.close()


def delete(queue: QueueConfig, message: Message) -> None:
    """As DeleteMessage does: an end marker any process may write."""
    receipt = Receipt(queue.topic, message.partition, message.offset, message.delivery_count)
    assert settler(queue).ack([receipt]) == [None]


def test_stock_no_request_takes_goes_back_uncounted_and_is_received_once(
    kafka: EmbeddedBroker, topic: str
) -> None:
    """Requests that keep coming make the receiver settle more than they
    wait for; when they stop, what no one took goes back unseen. Every
    message is then received exactly once, each with receive count 1."""
    config = QueueConfig(
        kafka.bootstrap_servers, topic, f"{topic}-workers", message_timeout_ms=TIMEOUT_MS
    )
    config.ensure_topics(partitions=3)
    tracker = RedeliveryTracker(config)
    tracker.start()
    receiver = receivers.Receiver(config)
    producer = QueueProducer(config)
    sent = {f"m{i}".encode() for i in range(60)}

    async def run() -> list[Message]:
        for body in sorted(sent):
            producer.send(body)
        producer.flush()
        got = await receiver.receive(2, 20)  # joined its group
        for _ in range(2):  # requests together, however slow the broker: it stocks
            for batch in await asyncio.gather(*(receiver.receive(2, 5) for _ in range(4))):
                got += batch
        await asyncio.sleep(receivers.FRESH_S * 3)  # then none: the stock goes back
        while len(got) < len(sent):
            more = await receiver.receive(10, 10)
            assert more, f"{len(sent) - len(got)} messages never came back"
            got += more
        assert await receiver.receive(10, 2) == []
        return got

    try:
        got = asyncio.run(run())
        for message in got:
            delete(config, message)
    finally:
        producer.close()
        tracker.stop()
    assert sorted(m.value for m in got) == sorted(sent)
    assert {m.delivery_count for m in got} == {1}
    given_back = read_topic(kafka.bootstrap_servers, config.markers_topic, 3)
    assert any(r.value() == markers.RETURN for r in given_back), "nothing was stocked"
