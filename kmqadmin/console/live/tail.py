"""The browser's live tail: records written to a topic after the socket
opened, filtered as the page is, pushed as table rows.

Each socket has its own Tail (kafka/inspect/tail.py): an assigned consumer at
the topic's end, polled in a thread of the tails' own pool so the event loop
never blocks on Kafka and a tail's one-second poll never waits for a thread.
At most MAX_TAILS are open in a process, each a consumer with librdkafka's
threads. A push carries at most Tail.rate rows a poll and says how many more
matched; the socket closes with a code saying why when it cannot start (4403
no role, 4404 no such cluster or topic, 4400 a bad filter, 4429 too many tails
open, 4503 the cluster unusable), and its consumer is closed with the socket.
"""

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from confluent_kafka import KafkaException
from confluent_kafka import Message as KafkaMessage
from django.template.loader import render_to_string

from kmqadmin.kafka.client.errors import KafkaSetupError, TopicMissing
from kmqadmin.kafka.inspect.payload_masking import MaskRules
from kmqadmin.kafka.inspect.record_filter import FilterError, RecordFilter
from kmqadmin.kafka.inspect.tail import Tail, TailBatch

from ..models import Cluster
from ..services.masking import topic_masking
from ..services.roles import Role, role_of
from .consumers import NOT_ALLOWED, NOT_FOUND

log = logging.getLogger(__name__)

BAD_FILTER = 4400
TOO_MANY = 4429
UNUSABLE = 4503
POLL_S = 1.0  # one push at most per this: with Tail.rate, the rate cap
MAX_TAILS = 32
_pollers = ThreadPoolExecutor(MAX_TAILS, thread_name_prefix="tail")
_tails_open = 0  # in this process; only the event loop's thread changes it


def _count(change: int) -> None:
    global _tails_open
    _tails_open += change


class TailConsumer(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        self.tail: Tail | None = None
        self.masking: MaskRules | None = None
        self.role = await database_sync_to_async(role_of)(self.scope["user"])
        if self.role < Role.VIEWER:
            await self.close(code=NOT_ALLOWED)
            return
        if _tails_open >= MAX_TAILS:
            await self.close(code=TOO_MANY)
            return
        _count(+1)  # before the wait for Kafka, so that no two connects take one place
        refused = await self._start()
        if refused is not None:
            _count(-1)
            await self.close(code=refused)
            return
        await self.accept()
        started = ", ".join(f"{p}@{o}" for p, o in sorted(self.tail.started.items()))
        await self._send(TailBatch([], 0), f"tailing from partition@offset {started}")
        self._follower = asyncio.create_task(self._follow())

    async def _start(self) -> int | None:
        """Opens the tail; the close code when it cannot be."""
        try:
            self.tail = await database_sync_to_async(self._open_tail)(self._filter())
        except FilterError:
            return BAD_FILTER
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
        if self.tail is not None:
            tail, self.tail = self.tail, None
            _count(-1)
            await asyncio.get_running_loop().run_in_executor(_pollers, tail.close)

    def _filter(self) -> RecordFilter:
        query = parse_qs(self.scope.get("query_string", b"").decode(errors="replace"))
        given = {name: query.get(name, [""])[-1] for name in ("key", "header", "contains")}
        return RecordFilter.build(**given, json_path=query.get("json_path", [""])[-1])

    def _open_tail(self, match: RecordFilter) -> Tail:
        """On a topic its queue masks for this person, the rows are masked
        and the filter sees the masked records (as the browser's page)."""
        route = self.scope["url_route"]["kwargs"]
        cluster = Cluster.objects.get(name=route["cluster"])
        self.masking = self._masking()
        return Tail(
            cluster.bootstrap,
            cluster.kafka_config(),
            route["topic"],
            None if match.empty else partial(self._matches, match),
        )

    def _masking(self) -> MaskRules | None:
        """Read again before each push: rules added while the tail is open
        mask its next rows."""
        route = self.scope["url_route"]["kwargs"]
        cluster = Cluster.objects.get(name=route["cluster"])
        return topic_masking(self.role, cluster, route["topic"])

    def _matches(self, match: RecordFilter, record: KafkaMessage) -> bool:
        masking = self.masking
        return match(record if masking is None else masking.record(record))

    async def _follow(self) -> None:
        """Polls until the socket goes; Kafka away is said on the page, and
        the tail keeps trying."""
        tail, loop = self.tail, asyncio.get_running_loop()
        assert tail is not None
        while True:
            try:
                batch = await loop.run_in_executor(_pollers, tail.poll, POLL_S)
                if batch.records or batch.skipped:
                    self.masking = await database_sync_to_async(self._masking)()
            except (KafkaException, KafkaSetupError) as exc:
                log.warning("live tail: %s", exc)
                await self._send(TailBatch([], 0), f"Kafka: {exc}")
                await asyncio.sleep(POLL_S)
                continue
            except Exception as exc:  # a task's exception would vanish: say it, then stop
                log.exception("live tail of %s failed", self.scope["path"])
                await self._send(TailBatch([], 0), f"stopped ({type(exc).__name__}: {exc})")
                return
            if batch.records or batch.skipped:
                await self._send(batch, "")

    async def _send(self, batch: TailBatch, status: str) -> None:
        if self.masking is not None:
            batch = TailBatch([self.masking.browsed(r) for r in batch.records], batch.skipped)
        route = self.scope["url_route"]["kwargs"]
        context = {"batch": batch, "status": status, "cluster": route["cluster"]}
        await self.send(text_data=render_to_string("console/_tail_rows.html", context))
