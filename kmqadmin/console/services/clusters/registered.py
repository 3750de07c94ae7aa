"""A registered queue or schedules topic by the name the URLs carry: its topic,
and its cluster's name when the same topic is registered on several clusters.

URLs stay /queues/<topic>/ (the common case, one cluster, keeps working) with
an optional ``?cluster=<name>``; the console's own links always carry it, so
they stay right when a second cluster registers the same topic. A bare topic
that names several registrations is ``Ambiguous``: answered 300 with the
clusters to choose from, never one picked silently.
"""

from django.http import Http404

from kmqadmin.console.models import Queue, ScheduleTopic
from kmqadmin.console.models.clusters import CLUSTER


class Ambiguous(LookupError):
    """The topic is registered on more than one cluster; which one is not said."""

    def __init__(self, topic: str, clusters: list[str]) -> None:
        self.topic, self.clusters = topic, clusters
        super().__init__(
            f"{topic} is registered on clusters {', '.join(clusters)}: "
            f"say which with ?{CLUSTER}=<name>"
        )


def lookup[M: (Queue, ScheduleTopic)](model: type[M], topic: str, cluster: str | None) -> M:
    """The one registration of ``topic`` (on ``cluster`` when given)."""
    rows = model.objects.select_related("cluster").filter(topic=topic)
    if cluster is not None:
        rows = rows.filter(cluster__name=cluster)
    found = list(rows)
    if not found:
        on = "" if cluster is None else f" on cluster {cluster}"
        raise Http404(f"no {model._meta.verbose_name} {topic} registered{on}")
    if len(found) > 1:
        raise Ambiguous(topic, [row.cluster.name for row in found])
    return found[0]
