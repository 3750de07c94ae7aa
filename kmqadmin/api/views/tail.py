"""The REST API's live tail, for services: a topic's records written after
the request, matching the browser's filters, as Server-Sent Events, each
event one poll's records in the browse answer's shape. It follows exactly
as the browser's live tail (console/services/browsing/following.py: masking, the rate
cap, the cap on tails open) and ends after ``seconds``, so that a client
and a proxy both know when; follow on with a new request.

Events: ``started`` (the offset each partition is followed from),
``records`` (``records`` and ``skipped``: matches past the rate cap), ``kafka``
(what keeps Kafka from answering; the tail keeps trying), ``end``.
"""

import json
import time
from collections.abc import AsyncIterator

from asgiref.sync import async_to_sync
from confluent_kafka import KafkaException
from django.http import Http404, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.exceptions import APIException, Throttled, ValidationError
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from kmqadmin.api.paging import bounded_int
from kmqadmin.api.views.topics import FILTERS, record_fields
from kmqadmin.console.models import Cluster
from kmqadmin.console.services.browsing.following import Following, TooMany
from kmqadmin.console.services.roles import Role, role_of
from kmqadmin.kafka.client.errors import KafkaSetupError, TopicMissing
from kmqadmin.kafka.inspect.record_filter import FilterError, RecordFilter

MAX_SECONDS = 3600


class EventStream(BaseRenderer):
    """Lets a client that accepts only text/event-stream (EventSource) in;
    the stream itself is the view's. An error before it starts is JSON."""

    media_type = "text/event-stream"
    format = "event-stream"

    def render(
        self, data: object, accepted_media_type: str | None = None, renderer_context: object = None
    ) -> bytes:
        return json.dumps(data).encode()


class Unusable(APIException):
    status_code = 503
    default_code = "kafka_unusable"


class TopicTail(APIView):
    renderer_classes = [JSONRenderer, EventStream]

    @extend_schema(
        operation_id="clusters_topic_tail",
        parameters=[
            *FILTERS,
            OpenApiParameter(
                "seconds", int, description=f"how long to follow, 1 to {MAX_SECONDS} (300)"
            ),
        ],
        responses={
            (200, "text/event-stream"): OpenApiResponse(
                OpenApiTypes.STR, description="events: started, records, kafka, end"
            )
        },
    )
    def get(self, request: Request, cluster: str, topic: str) -> StreamingHttpResponse:
        """Records written to the topic from now on, as Server-Sent Events."""
        params = request.query_params
        seconds = bounded_int(params, "seconds", 300, 1, MAX_SECONDS)
        try:
            given = RecordFilter.build(**{f.name: params.get(f.name, "") for f in FILTERS})
        except FilterError as exc:
            raise ValidationError({exc.part: [str(exc)]}) from None
        following = _open(role_of(request.user), cluster, topic, given)
        response = StreamingHttpResponse(
            _events(following, time.monotonic() + seconds), content_type="text/event-stream"
        )
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # nginx: pass each event on as it comes
        return response


def _open(role: Role, cluster: str, topic: str, given: RecordFilter) -> Following:
    try:
        return async_to_sync(Following.open)(role, cluster, topic, given)
    except Cluster.DoesNotExist:
        raise Http404(f"no cluster {cluster} registered") from None
    except TopicMissing:
        raise Http404(f"no topic {topic}") from None
    except TooMany as exc:
        raise Throttled(detail=str(exc)) from None
    except (KafkaSetupError, KafkaException) as exc:
        raise Unusable(f"Kafka did not answer: {exc}") from None


async def _events(following: Following, until: float) -> AsyncIterator[bytes]:
    """Until ``until`` or the client goes (the stream is cancelled), then the
    tail is closed."""
    try:
        yield _event("started", {"from": following.started})
        while time.monotonic() < until:
            push = await following.next()
            if push.status:
                yield _event("kafka", {"status": push.status})
            elif push.batch.records or push.batch.skipped:
                records = record_fields(push.batch.records)
                yield _event("records", {"records": records, "skipped": push.batch.skipped})
            else:
                yield b": still following\n\n"  # a comment: keeps proxies from timing out
        yield _event("end", {})
    finally:
        await following.close()


def _event(name: str, data: dict) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
