"""A view under a registered topic (/queues/{topic}/…, /schedules/{topic}/…):
the registration it names, on the cluster ``?cluster=`` names when the
topic is registered on several; the parameter documented on every such
operation."""

from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request

from kmqadmin.console.models import Queue, ScheduleTopic
from kmqadmin.console.models.clusters import CLUSTER as CLUSTER_QUERY
from kmqadmin.console.services.clusters import registered

CLUSTER = OpenApiParameter(
    CLUSTER_QUERY,
    str,
    description=(
        "the registered cluster, needed when the topic is registered on several "
        "(without it: 300 with the clusters to choose from)"
    ),
)


def registration[M: (Queue, ScheduleTopic)](request: Request, model: type[M], topic: str) -> M:
    return registered.lookup(model, topic, request.query_params.get(CLUSTER_QUERY))
