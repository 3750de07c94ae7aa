"""The queues the SQS endpoint serves: those registered on the cluster
KMQ_SQS_CLUSTER names (or on the only cluster registered)."""

from django.conf import settings

from kmqadmin.console.models import Cluster, Queue, SqsQueue

from . import queue_names
from .errors import SqsError, queue_does_not_exist, service_unavailable
from .params import Params


def cluster() -> Cluster:
    """The cluster whose queues the endpoint serves."""
    if settings.KMQ_SQS_CLUSTER:
        found = Cluster.objects.filter(name=settings.KMQ_SQS_CLUSTER).first()
        if found is None:
            raise _not_set_up(
                f"KMQ_SQS_CLUSTER names no registered cluster: {settings.KMQ_SQS_CLUSTER}"
            )
        return found
    clusters = list(Cluster.objects.all()[:2])
    if len(clusters) != 1:
        raise _not_set_up(
            "set KMQ_SQS_CLUSTER to the name of the cluster whose queues SQS clients use"
            if clusters
            else "no cluster is registered: register one in the console first"
        )
    return clusters[0]


def lookup(params: Params) -> tuple[Queue, SqsQueue]:
    """The queue ``QueueUrl`` names, with its SQS attributes."""
    name = queue_names.from_url(params.get("QueueUrl"))
    queue = Queue.objects.select_related("cluster").filter(cluster=cluster(), topic=name).first()
    if queue is None:
        raise queue_does_not_exist()
    return queue, SqsQueue.objects.get_or_create(queue=queue)[0]


def _not_set_up(reason: str) -> SqsError:
    return service_unavailable(f"The SQS endpoint is not set up: {reason}.")
