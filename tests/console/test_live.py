"""Live views: a marker written to Kafka reaches a connected WebSocket."""

import asyncio
import time

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from kmqadmin.console.live import feed
from kmqadmin.console.live.consumers import InFlightConsumer
from kmqadmin.console.live.routing import websocket_urlpatterns
from kmqadmin.console.models import Queue
from kmqadmin.kmq import QueueClient, QueueConfig
from tests.queue_helpers import poll_until, send
from tests.users import user_with

# Consumers query from their own threads: real transactions, and the role
# groups (a data migration) restored after each test.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def connect(path: str, user) -> WebsocketCommunicator:
    socket = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
    socket.scope["user"] = user
    return socket


async def receive_until(socket: WebsocketCommunicator, text: str, timeout: float) -> str:
    """Frames until one holds ``text``; fails at the deadline naming it."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            frame = await socket.receive_from(timeout=left)
        except TimeoutError:
            break
        if text in frame:
            return frame
    raise AssertionError(f"no frame with {text!r} within {timeout} s")


def test_a_start_and_an_end_marker_reach_the_open_queue_page(
    registered: Queue, queue: QueueConfig
) -> None:
    viewer = user_with("viewer")

    async def scenario() -> None:
        socket = connect(f"/ws/queues/{queue.topic}/in-flight/", viewer)
        connected, _ = await socket.connect()
        assert connected
        try:
            await receive_until(socket, "Nothing in flight", 20)
            await asyncio.to_thread(send, queue, 1)
            with QueueClient(queue) as worker:
                [message] = await asyncio.to_thread(poll_until, worker, 1)
                frame = await receive_until(socket, f'data-message="{message.id}"', 20)
                assert 'id="in-flight" hx-swap-oob="true"' in frame
                assert "ack</button>" not in frame  # a viewer gets no action buttons
                await asyncio.to_thread(worker.ack, message)
                await asyncio.to_thread(worker.flush)
            await receive_until(socket, "Nothing in flight", 20)
        finally:
            await socket.disconnect()

    async_to_sync(scenario)()


def test_the_dashboard_pushes_gauges_and_refuses_anonymous_sockets(registered: Queue) -> None:
    async def scenario() -> None:
        refused = connect("/ws/dashboard/", AnonymousUser())
        connected, code = await refused.connect()
        assert (connected, code) == (False, 4403)
        unknown = connect(
            "/ws/queues/no-such-queue/in-flight/", await database_sync_to_async(user_with)("viewer")
        )
        assert (await unknown.connect())[1] == 4404
        socket = connect(
            "/ws/dashboard/", await database_sync_to_async(user_with)("viewer", "viewer2")
        )
        assert (await socket.connect())[0]
        try:
            frame = await receive_until(socket, f"queue-{registered.pk}", 20)
            assert 'data-gauge="depth">0<' in frame
        finally:
            await socket.disconnect()

    async_to_sync(scenario)()


def test_a_share_queue_has_no_in_flight_socket(registered: Queue) -> None:
    Queue.objects.filter(pk=registered.pk).update(backend="share")

    async def scenario() -> None:
        viewer = await database_sync_to_async(user_with)("viewer")
        socket = connect(f"/ws/queues/{registered.topic}/in-flight/", viewer)
        assert (await socket.connect())[1] == 4404

    async_to_sync(scenario)()


def test_many_viewers_of_one_queue_share_one_render_per_tick(
    registered: Queue, queue: QueueConfig
) -> None:
    """Forty sockets, two roles: two feeds, each rendering once a tick for
    all its sockets, and every socket sees a change; the feeds stop with
    their last socket."""
    viewers = [user_with("viewer", f"viewer{i}") for i in range(30)]
    operators = [user_with("operator", f"operator{i}") for i in range(10)]
    path = f"/ws/queues/{queue.topic}/in-flight/"

    async def scenario() -> None:
        sockets = [connect(path, user) for user in viewers + operators]
        for socket in sockets:
            assert (await socket.connect())[0]
        try:
            for socket in sockets:
                await receive_until(socket, "Nothing in flight", 20)
            feeds = {k: f for k, f in feed.running().items() if "in-flight" in k}
            assert sorted(len(f.subscribers) for f in feeds.values()) == [10, 30]
            started = {k: f.renders for k, f in feeds.items()}
            began = time.monotonic()
            await asyncio.to_thread(send, queue, 1)
            with QueueClient(queue) as worker:
                [message] = await asyncio.to_thread(poll_until, worker, 1)
                for socket in sockets:
                    await receive_until(socket, f'data-message="{message.id}"', 20)
                await asyncio.to_thread(worker.ack, message)
                await asyncio.to_thread(worker.flush)
            ticks = (time.monotonic() - began) / InFlightConsumer.interval_s
            for key, f in feeds.items():
                assert f.renders - started[key] <= ticks + 2, (key, f.renders, ticks)
        finally:
            for socket in sockets:
                await socket.disconnect()
        assert not [k for k in feed.running() if "in-flight" in k]

    async_to_sync(scenario)()
