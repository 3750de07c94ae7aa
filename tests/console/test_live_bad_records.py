"""A live page keeps updating whatever a producer wrote: a fragment that
fails to render says so in place and the push loop goes on."""

import asyncio
from collections.abc import Callable

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from confluent_kafka import Producer

from kmqadmin.console.live.consumers import LiveConsumer
from kmqadmin.console.models import Queue
from kmqadmin.kmq import QueueClient, QueueConfig
from kmqadmin.kmq import headers as h
from tests.console.test_live import connect, receive_until
from tests.queue_helpers import poll_until, send
from tests.users import user_with

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def produce_spoofed(queue: QueueConfig, message_id: bytes) -> None:
    producer = Producer({"bootstrap.servers": queue.bootstrap_servers})
    producer.produce(queue.topic, b"bad", partition=0, headers=[(h.MESSAGE_ID, message_id)])
    assert producer.flush(10) == 0


def test_the_in_flight_page_keeps_updating_after_a_kmq_id_with_a_newline(
    registered: Queue, queue: QueueConfig
) -> None:
    viewer = user_with("viewer")

    async def scenario() -> None:
        socket = connect(f"/ws/queues/{queue.topic}/in-flight/", viewer)
        assert (await socket.connect())[0]
        try:
            await receive_until(socket, "Nothing in flight", 20)
            await asyncio.to_thread(produce_spoofed, queue, b"x\ny")
            with QueueClient(queue) as worker:
                [bad] = await asyncio.to_thread(poll_until, worker, 1)
                # No kmq-id: the row shows the copy's own coordinates.
                assert bad.id == f"{queue.topic}/0/{bad.offset}"
                await receive_until(socket, f'data-message="{bad.id}"', 20)
                await asyncio.to_thread(send, queue, 1)
                [good] = await asyncio.to_thread(poll_until, worker, 1)
                await receive_until(socket, f'data-message="{good.id}"', 20)
        finally:
            await socket.disconnect()

    async_to_sync(scenario)()


class FailsOnce(LiveConsumer):
    """Its first render fails as a bad record would make a real one fail."""

    interval_s = 0.05
    renders = 0

    def feed_key(self) -> str:
        return "fails-once"

    def renderer(self) -> Callable[[], str]:
        return self.render

    @staticmethod
    def render() -> str:
        FailsOnce.renders += 1
        if FailsOnce.renders == 1:
            raise ValueError("a record this view cannot show")
        return f"<p>render {FailsOnce.renders}</p>"


def test_a_fragment_that_fails_shows_the_error_and_the_next_push_comes() -> None:
    viewer = user_with("viewer")

    async def scenario() -> None:
        socket = WebsocketCommunicator(FailsOnce.as_asgi(), "/ws/test/")
        socket.scope["user"] = viewer
        assert (await socket.connect())[0]
        try:
            error = await receive_until(socket, "live-error", 10)
            assert "failed to render (ValueError: a record this view cannot show)" in error
            await receive_until(socket, "render 3", 10)
        finally:
            await socket.disconnect()

    async_to_sync(scenario)()
