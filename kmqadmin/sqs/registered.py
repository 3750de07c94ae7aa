"""The queues the SQS endpoint serves: those registered on the cluster
KMQ_SQS_CLUSTER names (or on the only cluster registered)."""

from django.conf import settings

from kmqadmin.console.models import Cluster, Queue, SqsQueue
from kmqadmin.sqs import queue_names
from kmqadmin.sqs.auth.remembered import remembered
from kmqadmin.sqs.protocol.errors import SqsError, queue_does_not_exist, service_unavailable
from kmqadmin.sqs.protocol.params import Params


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
            else "no cluster is registered: register one (console, or `manage.py kmq cluster add`)"
        )
    return clusters[0]


def lookup(params: Params, *, to_change: bool = False) -> tuple[Queue, SqsQueue]:
    """The queue ``QueueUrl`` names, with its SQS attributes: as remembered
    (remembered.py; not to be changed) unless ``to_change``, which reads
    them afresh for an action that edits them."""
    name = queue_names.from_url(params.get("QueueUrl"))
    found = (
        _registered(name) if to_change else remembered(("queue", name), lambda: _registered(name))
    )
    if found is None:
        raise queue_does_not_exist()
    return found


def queue_named(name: str) -> Queue | None:
    """The queue registered as ``name`` on the endpoint's cluster, if any."""
    queues = Queue.objects.select_related("cluster", "sqs").filter(cluster=cluster(), topic=name)
    return queues.first()


def _registered(name: str) -> tuple[Queue, SqsQueue] | None:
    queue = queue_named(name)
    if queue is None:
        return None
    try:
        return queue, queue.sqs
    except SqsQueue.DoesNotExist:  # registered in the console: SQS's defaults
        return queue, SqsQueue.objects.get_or_create(queue=queue)[0]


def _not_set_up(reason: str) -> SqsError:
    return service_unavailable(f"The SQS endpoint is not set up: {reason}.")
