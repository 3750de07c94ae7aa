"""The web process's receiver on a real broker, with a real tracker: a
message polled for a request that left before it was settled waits for the
next request, neither released nor counted as a receive no client saw."""

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest

from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueClient, QueueConfig, QueueProducer, RedeliveryTracker
from kmqadmin.kmq.message import Message
from kmqadmin.sqs import receivers
from kmqadmin.sqs.receipts import Receipt
from kmqadmin.sqs.settling import settler

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


@pytest.fixture
def queue(kafka: EmbeddedBroker, topic: str) -> Iterator[QueueConfig]:
    config = QueueConfig(
        kafka.bootstrap_servers, topic, f"{topic}-workers", message_timeout_ms=TIMEOUT_MS
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
        [late] = await receiver.receive(1, 1)
        assert (late.value, late.delivery_count) == (b"late", 1)
        # Its deadline was counted from its start; handed out, it is a whole
        # timeout from now: past the first deadline nothing comes back.
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
