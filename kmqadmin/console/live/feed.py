"""One render per live view per tick, however many sockets watch it.

A live page is the same fragment for every viewer of one queue with one
role, so rendering it per socket would cost a hundred viewers a hundred
renders a second. A feed renders once per tick and broadcasts the fragment
to a channel-layer group its sockets joined; it starts with its first
socket and stops with its last.

Feeds live in the web process that runs them, so their group names carry
this process's token: with Redis as the channel layer, a second web
process runs its own feeds for its own sockets, instead of both processes
pushing every fragment to every socket.
"""

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from channels.db import database_sync_to_async
from channels.layers import BaseChannelLayer

log = logging.getLogger(__name__)
PROCESS = uuid.uuid4().hex[:12]
# The handler a socket's consumer defines: "live.fragment" -> live_fragment.
EVENT = "live.fragment"


@dataclass
class Feed:
    group: str
    render: Callable[[], str]
    interval_s: float
    layer: BaseChannelLayer
    subscribers: set[str] = field(default_factory=set)
    last: str | None = None
    renders: int = 0
    task: asyncio.Task | None = None

    async def run(self) -> None:
        while True:
            try:
                await self.tick()
            except Exception:
                # The render explains its own failures on the page; what is
                # left (the channel layer away) must not end every viewer's push.
                log.exception("live feed %s failed to push", self.group)
            await asyncio.sleep(self.interval_s)

    async def tick(self) -> None:
        html = await database_sync_to_async(self.render)()
        self.renders += 1
        if html != self.last:
            self.last = html
            await self.layer.group_send(self.group, {"type": EVENT, "html": html})


_feeds: dict[str, Feed] = {}


def group_name(key: str) -> str:
    """Channel-layer group names allow letters, digits, '-', '_' and '.'."""
    return f"live.{PROCESS}.{key}"


async def join(
    key: str,
    render: Callable[[], str],
    interval_s: float,
    layer: BaseChannelLayer,
    channel: str,
) -> str | None:
    """Adds ``channel`` to the feed for ``key``, starting it if need be, and
    returns its latest fragment, so a new socket gets a page at once
    rather than at the next change."""
    feed = _feeds.get(key)
    if feed is None or not _running_here(feed):
        feed = _feeds[key] = Feed(group_name(key), render, interval_s, layer)
        feed.task = asyncio.create_task(feed.run())
    await layer.group_add(feed.group, channel)
    feed.subscribers.add(channel)
    return feed.last


async def leave(key: str, layer: BaseChannelLayer, channel: str) -> None:
    feed = _feeds.get(key)
    if feed is None:
        return
    await layer.group_discard(feed.group, channel)
    feed.subscribers.discard(channel)
    if not feed.subscribers and _feeds.get(key) is feed:
        del _feeds[key]
        if feed.task is not None:
            feed.task.cancel()


def running() -> dict[str, Feed]:
    """The feeds now running, by key: for tests and metrics."""
    return dict(_feeds)


def _running_here(feed: Feed) -> bool:
    """A feed whose task ended, or whose loop is not this one (a test's
    event loop that has closed), is replaced rather than joined."""
    task = feed.task
    if task is None or task.done():
        return False
    return task.get_loop() is asyncio.get_running_loop()
