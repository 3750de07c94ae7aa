"""Live views over WebSockets: the server renders HTML fragments and pushes them.

The htmx ws extension swaps each fragment into the page by its id, so a live
table is the same template on first paint and on every push. A consumer
renders from the web process's own views of the topics (services/clients.py): no
process asks a tracker anything, and many open pages share one view.
"""

import asyncio
import logging
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from confluent_kafka import KafkaException
from django.http import Http404
from django.template.loader import render_to_string

from kmqadmin.kafka.errors import KafkaSetupError, TopicMissing
from kmqadmin.kafka.offset_reader import ReadTimeout

from .models import Queue
from .services import registered
from .services.in_flight_pages import in_flight_page
from .services.queue_stats import queue_stats
from .services.roles import Role, role_of
from .services.sparklines import sparklines

log = logging.getLogger(__name__)

# Close codes (4000-4999 are the application's): why the socket was refused.
NOT_ALLOWED = 4403
NOT_FOUND = 4404
ROWS = 50


class LiveConsumer(AsyncWebsocketConsumer):
    """Pushes ``render()`` every ``interval_s`` while the socket is open,
    and only when the fragment changed."""

    interval_s = 1.0

    async def connect(self) -> None:
        if await database_sync_to_async(role_of)(self.scope["user"]) < Role.VIEWER:
            await self.close(code=NOT_ALLOWED)
            return
        if not await database_sync_to_async(self.prepare)():
            await self.close(code=NOT_FOUND)
            return
        await self.accept()
        self._pusher = asyncio.create_task(self._push())

    async def disconnect(self, code: int) -> None:
        pusher = getattr(self, "_pusher", None)
        if pusher is not None:
            pusher.cancel()

    def prepare(self) -> bool:
        """Looks up what the socket is about; False refuses it."""
        return True

    def render(self) -> str:
        raise NotImplementedError

    async def _push(self) -> None:
        last = None
        while True:
            html = await database_sync_to_async(self._render_or_explain)()
            if html != last:
                await self.send(text_data=html)
                last = html
            await asyncio.sleep(self.interval_s)

    def _render_or_explain(self) -> str:
        """Kafka away, a topic missing or a record this view cannot show says
        so on the page, and the socket keeps trying, rather than dying: an
        exception escaping here would end the push task silently, for every
        viewer of the page."""
        try:
            return self.render()
        except (KafkaException, ReadTimeout, TopicMissing) as exc:
            log.warning("live view %s: %s", type(self).__name__, exc)
            error = f"Kafka: {exc}"
        except Exception as exc:
            log.exception("live view %s failed to render", type(self).__name__)
            error = f"this view failed to render ({type(exc).__name__}: {exc})"
        return render_to_string("console/_live_error.html", {"error": error})


class DashboardConsumer(LiveConsumer):
    interval_s = 2.0

    def render(self) -> str:
        rows = []
        for queue in Queue.objects.select_related("cluster"):
            try:
                rows.append(
                    {"queue": queue, "stats": queue_stats(queue), "lines": sparklines(queue)}
                )
            except (KafkaException, ReadTimeout, KafkaSetupError) as exc:
                rows.append({"queue": queue, "error": str(exc)})
        return render_to_string("console/_dashboard_rows.html", {"rows": rows})


class InFlightConsumer(LiveConsumer):
    def prepare(self) -> bool:
        """Refused for an unknown queue, for a share queue (it has no
        in-flight table), and for a topic registered on several clusters
        without ``?cluster=`` (the page's own socket URL names it)."""
        topic = self.scope["url_route"]["kwargs"]["topic"]
        query = parse_qs(self.scope.get("query_string", b"").decode(errors="replace"))
        cluster = query.get(registered.CLUSTER, [None])[-1]
        try:
            self.queue = registered.lookup(Queue, topic, cluster)
        except (Http404, registered.Ambiguous):
            return False
        # A share queue's deliveries are the broker's: no markers, no table.
        return self.queue.backend != "share"

    def render(self) -> str:
        page = in_flight_page(self.queue, ROWS)
        context = {
            "queue": self.queue,
            "page": page,
            "stats": queue_stats(self.queue),
            "can_act": role_of(self.scope["user"]) >= Role.OPERATOR,
        }
        return render_to_string("console/_in_flight.html", context)
