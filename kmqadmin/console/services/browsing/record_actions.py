"""What an operator can do with a browsed record: reproduce a queue message
with edits, or redrive a dead letter with edits. Each goes to the page that
does it for its queue, so the browser adds no second way of writing."""

from urllib.parse import urlencode

from django.http import HttpRequest
from django.urls import reverse

from kmqadmin.console.models import Cluster
from kmqadmin.console.models.clusters import cluster_query
from kmqadmin.console.services.roles import Role, role_of
from kmqadmin.kafka.inspect.browse import BrowsedRecord
from kmqadmin.kmq import headers


def record_actions(request: HttpRequest, cluster: Cluster, record: BrowsedRecord) -> list[dict]:
    """Links as (label, url), none for a viewer or a topic no queue owns."""
    if role_of(request.user) < Role.OPERATOR:
        return []
    for queue in cluster.queues.all():
        on = cluster_query(queue)
        if record.topic == queue.topic:
            kmq_id = headers.stable_id(record.headers, *_coordinates(record)).decode()
            url = reverse("console:produce", args=[queue.topic])
            return [{"label": "Reproduce with edits", "url": f"{url}?{on}&{_from(kmq_id)}"}]
        if record.topic == queue.dlq_topic:
            args = [queue.topic, record.partition, record.offset]
            url = reverse("console:redrive-with-edits", args=args)
            return [{"label": "Redrive with edits", "url": f"{url}?{on}"}]
    return []


def _coordinates(record: BrowsedRecord) -> tuple[str, int, int]:
    return record.topic, record.partition, record.offset


def _from(kmq_id: str) -> str:
    return urlencode({"from": kmq_id})
