"""The browser's live tail: records written to a topic after the socket
opened, filtered as the page is, pushed as table rows.

The following itself (a Tail per socket, masking, the cap on tails open)
is services/browsing/following.py's. A push carries at most Tail.rate rows a poll and says
how many more matched; the socket closes with a code saying why when it
cannot start (4403 no role, 4404 no such cluster or topic, 4400 a bad
filter, 4429 too many tails open, 4503 the cluster unusable), and its
consumer is closed with the socket.
"""

import asyncio
import logging
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from confluent_kafka import KafkaException
from django.template.loader import render_to_string

from kmqadmin.console.live.consumers import NOT_ALLOWED, NOT_FOUND
from kmqadmin.console.models import Cluster
from kmqadmin.console.services.browsing.following import Following, Push, TooMany
from kmqadmin.console.services.roles import Role, role_of
from kmqadmin.kafka.client.errors import KafkaSetupError, TopicMissing
from kmqadmin.kafka.inspect.record_filter import FilterError, RecordFilter
from kmqadmin.kafka.inspect.tail import TailBatch

log = logging.getLogger(__name__)

BAD_FILTER = 4400
TOO_MANY = 4429
UNUSABLE = 4503


class TailConsumer(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        self.following: Following | None = None
        role = await database_sync_to_async(role_of)(self.scope["user"])
        if role < Role.VIEWER:
            await self.close(code=NOT_ALLOWED)
            return
        refused = await self._start(role)
        if refused is not None:
            await self.close(code=refused)
            return
        await self.accept()
        started = ", ".join(f"{p}@{o}" for p, o in sorted(self.following.started.items()))
        await self._send(Push(TailBatch([], 0), f"tailing from partition@offset {started}"))
        self._follower = asyncio.create_task(self._follow())

    async def _start(self, role: Role) -> int | None:
        """Opens the tail; the close code when it cannot be."""
        route = self.scope["url_route"]["kwargs"]
        try:
            self.following = await Following.open(
                role, route["cluster"], route["topic"], self._filter()
            )
        except FilterError:
            return BAD_FILTER
        except TooMany:
            return TOO_MANY
        except (Cluster.DoesNotExist, TopicMissing):
            return NOT_FOUND
        except (KafkaSetupError, KafkaException) as exc:
            log.warning("live tail not started: %s", exc)
            return UNUSABLE
        return None

    async def disconnect(self, code: int) -> None:
        follower = getattr(self, "_follower", None)
        if follower is not None:
            follower.cancel()
            await asyncio.gather(follower, return_exceptions=True)
        if self.following is not None:
            following, self.following = self.following, None
            await following.close()

    def _filter(self) -> RecordFilter:
        query = parse_qs(self.scope.get("query_string", b"").decode(errors="replace"))
        given = {name: query.get(name, [""])[-1] for name in ("key", "header", "contains")}
        return RecordFilter.build(**given, json_path=query.get("json_path", [""])[-1])

    async def _follow(self) -> None:
        """Polls until the socket goes; Kafka away is said on the page, and
        the tail keeps trying."""
        following = self.following
        assert following is not None
        while True:
            try:
                push = await following.next()
            except Exception as exc:  # a task's exception would vanish: say it, then stop
                log.exception("live tail of %s failed", self.scope["path"])
                await self._send(Push(TailBatch([], 0), f"stopped ({type(exc).__name__}: {exc})"))
                return
            if push.batch.records or push.batch.skipped or push.status:
                await self._send(push)

    async def _send(self, push: Push) -> None:
        route = self.scope["url_route"]["kwargs"]
        context = {"batch": push.batch, "status": push.status, "cluster": route["cluster"]}
        await self.send(text_data=render_to_string("console/_tail_rows.html", context))
