"""Every console page and API list over a queue and a schedules topic, walked
as a user would: lists paged by their ``next``, and each message, letter and
schedule they name opened. Each answer must be a 200 or a 4xx; a 500 or an
exception is collected (with the URL) rather than raised, so one walk
reports every page that broke."""

import re
from collections.abc import Callable
from urllib.parse import quote

from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from kmqadmin.console.live.consumers import DashboardConsumer, InFlightConsumer
from kmqadmin.console.models import Queue, ScheduleTopic
from kmqadmin.console.services.roles import role_of

# Small pages, so that the cursors of hostile ids and offsets are followed too.
LIMIT = 2
MAX_PAGES = 10


class Walk:
    def __init__(self, user: User) -> None:
        self.user = user
        self.console = Client()
        self.console.force_login(user)
        self.api = APIClient()
        self.api.force_authenticate(user)
        self.failures: list[str] = []
        self.visited = 0

    def get(self, client: Client, url: str, query: dict | None = None) -> object | None:
        """The answer's JSON (or True for a page); None when it broke or is a 4xx."""
        self.visited += 1
        shown = f"GET {url} {query or ''}"
        try:
            answer = client.get(url, query)
        except Exception as exc:  # every crash is a finding, named by its URL
            self.failures.append(f"{shown}: {type(exc).__name__}: {exc}"[:400])
            return None
        if not (answer.status_code == 200 or 400 <= answer.status_code < 500):
            self.failures.append(f"{shown}: answered {answer.status_code}")
            return None
        if answer.status_code != 200:
            return None
        is_json = answer.headers.get("Content-Type", "").startswith("application/json")
        return answer.json() if is_json else True

    def pages(self, client: Client, url: str, query: dict, cursor: str) -> list[dict]:
        """Every result of a paged API list, following ``next`` as ``cursor``."""
        results: list[dict] = []
        for _ in range(MAX_PAGES):
            page = self.get(client, url, query)
            if not isinstance(page, dict):
                break
            results += page["results"]
            if page.get("next") is None:
                break
            query = query | {cursor: page["next"]}
        return results

    def render(self, what: str, render: Callable[[], str]) -> None:
        """A live view's fragment, rendered as its push loop renders it."""
        self.visited += 1
        try:
            render()
        except Exception as exc:
            self.failures.append(f"live {what}: {type(exc).__name__}: {exc}"[:400])


def walk_queue(walk: Walk, queue: Queue) -> None:
    topic = queue.topic
    pages = ("/", "/healthz", "/audit/", "/registry/", "/alerts/", "/alerts/history/")
    for url in (*pages, f"/queues/{topic}/"):
        walk.get(walk.console, url)
    api = f"/api/v1/queues/{topic}"
    for url in ("/api/v1/queues/", f"{api}/stats"):
        walk.get(walk.api, url)
    ids = {
        row["id"] for row in walk.pages(walk.api, f"{api}/in-flight/", {"limit": LIMIT}, "after")
    }
    for partition in range(queue.partitions):
        on = {"partition": partition}
        walk.get(walk.console, f"/queues/{topic}/dlq/", on)
        letters = walk.pages(walk.api, f"{api}/dlq/", on | {"limit": LIMIT}, "from")
        ids |= {letter["id"] for letter in letters if letter["id"]}
    for message_id in sorted(ids):
        walk.get(walk.console, f"/queues/{topic}/messages/{quote(message_id, safe='/')}")
    walk.render("dashboard", _consumer(DashboardConsumer, walk.user, {}))
    walk.render("in-flight", _consumer(InFlightConsumer, walk.user, {"topic": topic}))


def walk_schedules(walk: Walk, schedules: ScheduleTopic) -> None:
    topic = schedules.topic
    walk.get(walk.console, f"/schedules/{topic}/")
    listed = walk.pages(walk.api, f"/api/v1/schedules/{topic}/", {"limit": LIMIT}, "after")
    for schedule_id in sorted({row["id"] for row in listed}):
        quoted = quote(schedule_id, safe="")
        walk.get(walk.api, f"/api/v1/schedules/{topic}/{quoted}")
        walk.get(walk.console, f"/schedules/{topic}/{quoted}/edit")


# Records of each browsed partition opened in every rendering.
WALK_RECORDS = 3


def walk_browser(walk: Walk, queue: Queue) -> None:
    """The message browser over each of the queue's topics: the newest
    records of every partition, the newest few opened in every rendering
    (each example's hostile records are the newest)."""
    base = f"/clusters/{queue.cluster.name}/topics"
    walk.get(walk.console, f"{base}/")
    config = queue.config()
    for topic in (queue.topic, queue.markers_topic, queue.dlq_topic, config.schedules_topic):
        for partition in range(queue.partitions):
            query = {"partition": partition, "start": "newest", "direction": "backward"}
            page = walk.console.get(f"{base}/{topic}/browse", query | {"limit": LIMIT * 5})
            walk.visited += 1
            if page.status_code != 200:
                walk.failures.append(f"browse {topic}/{partition}: answered {page.status_code}")
                continue
            shown_offsets = re.findall(rf'data-offset="{partition}/(\d+)"', page.content.decode())
            for shown in shown_offsets[:WALK_RECORDS]:
                for rendering in ("json", "text", "hex", "marker", "schedule"):
                    walk.get(walk.console, f"{base}/{topic}/{partition}/{shown}", {"as": rendering})


def _consumer(kind: type, user: User, route: dict) -> Callable[[], str]:
    """A live consumer as a socket would set it up, ready to render."""

    def render() -> str:
        consumer = kind()
        consumer.scope = {"user": user, "url_route": {"kwargs": route}}
        consumer.role = role_of(user)
        assert consumer.prepare(), f"{kind.__name__} refused its socket"
        return consumer.renderer()()

    return render
