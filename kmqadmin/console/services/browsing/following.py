"""One reader's live tail of a topic, as that reader may see it: the
records written after it opened that match a filter, masked for a masked
audience (the filter sees them masked too, as the browser's page does; the
rules are read again before each push, so rules added while it is open mask
its next records). The browser's socket (tail.py) and the API's event
stream (api/views/tail.py) both follow through here.

Each has its own Tail (kafka/inspect/tail.py): an assigned consumer at the
topic's end, polled in a thread of the tails' own pool so the event loop
never blocks on Kafka and a tail's poll never waits for a thread. At most
MAX_TAILS are open in a process, each a consumer with librdkafka's threads:
``open`` raises TooMany past that.
"""

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial

from channels.db import database_sync_to_async
from confluent_kafka import KafkaException
from confluent_kafka import Message as KafkaMessage

from kmqadmin.console.models import Cluster
from kmqadmin.console.services.browsing.masking import topic_masking
from kmqadmin.console.services.roles import Role
from kmqadmin.kafka.client.errors import KafkaSetupError
from kmqadmin.kafka.inspect.payload_masking import MaskRules
from kmqadmin.kafka.inspect.record_filter import RecordFilter
from kmqadmin.kafka.inspect.tail import Tail, TailBatch

log = logging.getLogger(__name__)

POLL_S = 1.0  # one push at most per this: with Tail.rate, the rate cap
MAX_TAILS = 32
_pollers = ThreadPoolExecutor(MAX_TAILS, thread_name_prefix="tail")
_open = 0  # tails open in this process
_open_lock = threading.Lock()  # an API tail served by WSGI opens and closes on threads of its own


class TooMany(Exception):
    """MAX_TAILS are open in this process already."""


@dataclass(frozen=True)
class Push:
    """What a poll brought, masked as the reader sees it; ``status`` says
    what went wrong (Kafka away: the tail keeps trying), else empty."""

    batch: TailBatch
    status: str = ""


class Following:
    def __init__(self, role: Role, cluster_name: str, topic: str, given: RecordFilter) -> None:
        """Blocking (the database, Kafka): ``open`` runs it in a thread."""
        self._role, self._topic = role, topic
        self._cluster = Cluster.objects.get(name=cluster_name)
        self.masking: MaskRules | None = topic_masking(role, self._cluster, topic)
        match = None if given.empty else partial(self._matches, given)
        self._tail = Tail(self._cluster.bootstrap, self._cluster.kafka_config(), topic, match)
        self.started = self._tail.started

    @classmethod
    async def open(
        cls, role: Role, cluster_name: str, topic: str, given: RecordFilter
    ) -> "Following":
        """Cluster.DoesNotExist or TopicMissing for what is not there;
        KafkaSetupError or KafkaException when the cluster is unusable."""
        global _open
        with _open_lock:  # taken before the wait for Kafka: no two opens take one place
            if _open >= MAX_TAILS:
                raise TooMany(f"{MAX_TAILS} live tails are open in this process; close one")
            _open += 1
        try:
            return await database_sync_to_async(cls)(role, cluster_name, topic, given)
        except BaseException:
            _closed()
            raise

    async def next(self) -> Push:
        """One poll's matches (a poll waits up to POLL_S), or what kept it
        from Kafka."""
        loop = asyncio.get_running_loop()
        try:
            batch = await loop.run_in_executor(_pollers, self._tail.poll, POLL_S)
        except (KafkaException, KafkaSetupError) as exc:
            log.warning("live tail: %s", exc)
            await asyncio.sleep(POLL_S)
            return Push(TailBatch([], 0), f"Kafka: {exc}")
        if batch.records or batch.skipped:
            self.masking = await database_sync_to_async(topic_masking)(
                self._role, self._cluster, self._topic
            )
        return Push(self._masked(batch))

    async def close(self) -> None:
        _closed()
        await asyncio.get_running_loop().run_in_executor(_pollers, self._tail.close)

    def _matches(self, given: RecordFilter, record: KafkaMessage) -> bool:
        masking = self.masking
        return given(record if masking is None else masking.record(record))

    def _masked(self, batch: TailBatch) -> TailBatch:
        if self.masking is None:
            return batch
        return TailBatch([self.masking.browsed(r) for r in batch.records], batch.skipped)


def _closed() -> None:
    global _open
    with _open_lock:
        _open -= 1
