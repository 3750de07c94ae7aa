"""What a topic of a cluster is to kmqadmin, from the registrations: it picks
how the browser decodes its records (a markers topic as markers, a schedules
topic as schedules); a topic nobody registered is shown raw."""

from enum import StrEnum

from kmqadmin.console.models import Cluster
from kmqadmin.kmq import names


class Kind(StrEnum):
    QUEUE = "queue"
    DLQ = "dlq"
    MARKERS = "markers"
    SCHEDULES = "schedules"
    OTHER = "other"


def topic_kinds(cluster: Cluster) -> dict[str, Kind]:
    """The registered topics of ``cluster`` and their kinds; any other topic is OTHER."""
    kinds: dict[str, Kind] = {}
    for queue in cluster.queues.all():
        kinds[queue.topic] = Kind.QUEUE
        kinds[queue.dlq_topic] = Kind.DLQ
        kinds[names.schedules_topic(queue.topic)] = Kind.SCHEDULES  # its backoff's, its delays'
        if queue.backend != "share":
            kinds[queue.markers_topic] = Kind.MARKERS
    for schedules in cluster.schedules.all():
        kinds[schedules.topic] = Kind.SCHEDULES
    return kinds


def kind_of(cluster: Cluster, topic: str) -> Kind:
    return topic_kinds(cluster).get(topic, Kind.OTHER)
