"""The browser's live tail over a real WebSocket: records written after it
opened that match its filters are pushed as rows, no others; a bad filter,
an unknown topic and a visitor without a role are refused with a code."""

import asyncio

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from confluent_kafka import Producer
from django.contrib.auth.models import AnonymousUser

from kmqadmin.console.models import Queue
from tests.console.test_live import connect, receive_until
from tests.users import user_with

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def write(bootstrap: str, topic: str, records: list[tuple[bytes, bytes]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for key, value in records:
        producer.produce(topic, value, key, partition=int(key[-1:]) % 3)
    assert producer.flush(10) == 0


def test_new_matching_records_are_pushed_and_others_are_not(registered: Queue) -> None:
    viewer = user_with("viewer")
    bootstrap, topic = registered.cluster.bootstrap, registered.topic
    write(bootstrap, topic, [(b"old-1", b'{"status": "failed"}')])  # before the tail: not shown
    query = "json_path=%24%5B%3F%40.status%20%3D%3D%20%27failed%27%5D&key=order"

    async def scenario() -> None:
        socket = connect(f"/ws/clusters/local/topics/{topic}/tail/?{query}", viewer)
        assert (await socket.connect())[0]
        try:
            await receive_until(socket, "tailing from partition@offset 0@0, 1@1, 2@0", 20)
            records = [
                (b"order-1", b'{"status": "ok"}'),
                (b"order-2", b'{"status": "failed"}'),
                (b"other-3", b'{"status": "failed"}'),
                (b"order-4", b"not json"),
            ]
            await asyncio.to_thread(write, bootstrap, topic, records)
            frame = await receive_until(socket, 'data-offset="2/0"', 20)
            assert 'id="tail" hx-swap-oob="afterbegin"' in frame
            assert "order-2" in frame
            assert not any(k in frame for k in ("order-1", "other-3", "order-4", "old-1"))
            await asyncio.to_thread(
                write, bootstrap, topic, [(b"order-5", b'{"status": "failed"}')]
            )
            later = await receive_until(socket, "order-5", 20)
            assert "order-2" not in later  # each push carries only what is new
        finally:
            await socket.disconnect()

    async_to_sync(scenario)()


def test_the_tail_refuses_what_it_cannot_serve(registered: Queue) -> None:
    async def scenario() -> None:
        viewer = await database_sync_to_async(user_with)("viewer")
        base = "/ws/clusters/local/topics"
        cases = [
            (f"{base}/{registered.topic}/tail/", AnonymousUser(), 4403),
            (f"{base}/{registered.topic}/tail/?json_path=%24%5B", viewer, 4400),
            (f"{base}/no-such-topic/tail/", viewer, 4404),
            (f"/ws/clusters/nowhere/topics/{registered.topic}/tail/", viewer, 4404),
        ]
        for path, user, code in cases:
            assert await connect(path, user).connect() == (False, code), path

    async_to_sync(scenario)()


def test_tails_open_at_once_are_capped(registered: Queue, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("kmqadmin.console.services.browsing.following.MAX_TAILS", 1)
    path = f"/ws/clusters/local/topics/{registered.topic}/tail/"

    async def scenario() -> None:
        viewer = await database_sync_to_async(user_with)("viewer")
        first = connect(path, viewer)
        assert (await first.connect())[0]
        assert await connect(path, viewer).connect() == (False, 4429)
        await first.disconnect()
        again = connect(path, viewer)
        assert (await again.connect())[0]
        await again.disconnect()

    async_to_sync(scenario)()
