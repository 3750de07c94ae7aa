"""Live views over WebSockets: the server renders HTML fragments and pushes them.

The htmx ws extension swaps each fragment into the page by its id, so a live
table is the same template on first paint and on every push. A fragment is
rendered once per tick for all the sockets showing it (feed.py), from
the web process's own views of the topics (console/services/clusters/clients.py): no process
asks a tracker anything, and many open pages share one view and one render.
"""

import logging
from collections.abc import Callable
from functools import partial
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from confluent_kafka import KafkaException
from django.http import Http404
from django.template.loader import render_to_string

from kmqadmin.console.live import feed
from kmqadmin.console.models import Queue
from kmqadmin.console.models.clusters import CLUSTER
from kmqadmin.console.services.browsing.masking import MASKING_FIELDS, masking_for_role
from kmqadmin.console.services.clusters import registered
from kmqadmin.console.services.clusters.availability import KafkaAway
from kmqadmin.console.services.queues.in_flight_pages import in_flight_page
from kmqadmin.console.services.queues.sparklines import sparklines
from kmqadmin.console.services.queues.stats import queue_stats
from kmqadmin.console.services.roles import Role, role_of
from kmqadmin.kafka.admin.offset_reader import ReadTimeout
from kmqadmin.kafka.client.errors import KafkaSetupError, TopicMissing

log = logging.getLogger(__name__)

# Close codes (4000-4999 are the application's): why the socket was refused.
NOT_ALLOWED = 4403
NOT_FOUND = 4404
ROWS = 50


class LiveConsumer(AsyncWebsocketConsumer):
    """Joins the feed that pushes ``render()`` every ``interval_s``, and only
    when the fragment changed, to every socket with the same ``feed_key``."""

    interval_s = 1.0
    _feed_key: str | None = None

    async def connect(self) -> None:
        self.role = await database_sync_to_async(role_of)(self.scope["user"])
        if self.role < Role.VIEWER:
            await self.close(code=NOT_ALLOWED)
            return
        if not await database_sync_to_async(self.prepare)():
            await self.close(code=NOT_FOUND)
            return
        await self.accept()
        self._feed_key = self.feed_key()
        render = partial(_render_or_explain, type(self).__name__, self.renderer())
        latest = await feed.join(
            self._feed_key, render, self.interval_s, self.channel_layer, self.channel_name
        )
        if latest is not None:
            await self.send(text_data=latest)

    async def disconnect(self, code: int) -> None:
        if self._feed_key is not None:
            await feed.leave(self._feed_key, self.channel_layer, self.channel_name)

    async def live_fragment(self, event: dict) -> None:
        await self.send(text_data=event["html"])

    def prepare(self) -> bool:
        """Looks up what the socket is about; False refuses it."""
        return True

    def feed_key(self) -> str:
        """Sockets with one key see one fragment: what the render depends on."""
        raise NotImplementedError

    def renderer(self) -> Callable[[], str]:
        """The render, bound to what it depends on and not to this socket,
        which may close while the feed goes on for others."""
        raise NotImplementedError


def _render_or_explain(view: str, render: Callable[[], str]) -> str:
    """Kafka away, a topic missing or a record this view cannot show says
    so on the page, and the feed keeps trying, rather than dying: an
    exception escaping here would end the push for every viewer of the page."""
    try:
        return render()
    except KafkaAway as exc:  # logged once by availability, not on every tick
        error = str(exc)
    except (KafkaException, ReadTimeout, TopicMissing) as exc:
        log.warning("live view %s: %s", view, exc)
        error = f"Kafka: {exc}"
    except Exception as exc:
        log.exception("live view %s failed to render", view)
        error = f"this view failed to render ({type(exc).__name__}: {exc})"
    return render_to_string("console/_live_error.html", {"error": error})


class DashboardConsumer(LiveConsumer):
    interval_s = 2.0

    def feed_key(self) -> str:
        return "dashboard"

    def renderer(self) -> Callable[[], str]:
        return dashboard_rows


class InFlightConsumer(LiveConsumer):
    def prepare(self) -> bool:
        """Refused for an unknown queue, for a share queue (it has no
        in-flight table), and for a topic registered on several clusters
        without ``?cluster=`` (the page's own socket URL names it)."""
        topic = self.scope["url_route"]["kwargs"]["topic"]
        query = parse_qs(self.scope.get("query_string", b"").decode(errors="replace"))
        cluster = query.get(CLUSTER, [None])[-1]
        try:
            self.queue = registered.lookup(Queue, topic, cluster)
        except (Http404, registered.Ambiguous):
            return False
        # A share queue's deliveries are the broker's: no markers, no table.
        return self.queue.backend != "share"

    def feed_key(self) -> str:
        # One feed per role: an operator's table has action buttons a
        # viewer's has not, and what each role sees masked differs, so a
        # masked audience never shares a clear audience's fragment.
        return f"in-flight.{self.queue.pk}.{self.role.name.lower()}"

    def renderer(self) -> Callable[[], str]:
        return partial(in_flight_table, self.queue, self.role)


def dashboard_rows() -> str:
    rows = []
    for queue in Queue.objects.select_related("cluster"):
        try:
            rows.append({"queue": queue, "stats": queue_stats(queue), "lines": sparklines(queue)})
        except (KafkaException, ReadTimeout, KafkaSetupError) as exc:
            rows.append({"queue": queue, "error": str(exc)})
    return render_to_string("console/_dashboard_rows.html", {"rows": rows})


def in_flight_table(queue: Queue, role: Role) -> str:
    """The masking rules are read again each tick: rules an admin adds
    while the page is open mask its next push, not its next visit."""
    queue.refresh_from_db(fields=MASKING_FIELDS)
    context = {
        "queue": queue,
        "page": in_flight_page(queue, ROWS, masking=masking_for_role(role, queue)),
        "stats": queue_stats(queue),
        "can_act": role >= Role.OPERATOR,
    }
    return render_to_string("console/_in_flight.html", context)
