"""The REST API for queues: list, enqueue, in-flight deliveries, actions on them.

Every body is built by the serializer the view's schema names, so the
OpenAPI document and the answers cannot drift apart.
"""

from django.forms.models import model_to_dict
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kmqadmin.api.paging import LIMIT, page_after, page_limit
from kmqadmin.api.serializers.messages import (
    ActionDoneSerializer,
    ActionSerializer,
    EnqueuedSerializer,
    EnqueueSerializer,
    InFlightPageSerializer,
)
from kmqadmin.api.serializers.queues import QueueSerializer, QueueStatsSerializer
from kmqadmin.api.views.registrations import CLUSTER, registration
from kmqadmin.console.models import Queue
from kmqadmin.console.services import cursors
from kmqadmin.console.services.audit import trail as audit
from kmqadmin.console.services.browsing.masking import masking_for
from kmqadmin.console.services.queues import messages, sent_once
from kmqadmin.console.services.queues.backend_switch import check_switch
from kmqadmin.console.services.queues.in_flight_pages import in_flight_page
from kmqadmin.console.services.queues.stats import queue_stats
from kmqadmin.console.services.roles import Role
from kmqadmin.kmq.draft import TooLarge
from kmqadmin.kmq.given_headers import BadInput

IDEMPOTENCY_KEY = "Idempotency-Key"


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"


class QueueList(generics.ListCreateAPIView):
    """The registered queues; admins register one (its missing topics are
    created, as the console's registry does)."""

    queryset = Queue.objects.select_related("cluster")
    serializer_class = QueueSerializer
    pagination_class = None
    write_role = Role.ADMIN

    def perform_create(self, serializer: QueueSerializer) -> None:
        _register(self.request, serializer, None)


@extend_schema(parameters=[CLUSTER])
class QueueAPIView(APIView):
    """A view under /queues/{topic}/: the queue must be registered."""

    def queue(self, topic: str) -> Queue:
        return registration(self.request, Queue, topic)


class QueueDetail(QueueAPIView, generics.RetrieveUpdateAPIView):
    """One registration; admins edit it. A backend switch while messages are
    in flight is refused (409, with the reason and the count)."""

    serializer_class = QueueSerializer
    write_role = Role.ADMIN

    def get_object(self) -> Queue:
        return self.queue(self.kwargs["topic"])

    def perform_update(self, serializer: QueueSerializer) -> None:
        saved = serializer.instance
        backend = serializer.validated_data.get("backend", saved.backend)
        check_switch(self.request.user, saved, backend)
        _register(self.request, serializer, model_to_dict(saved))


def _register(request: Request, serializer: QueueSerializer, before: dict | None) -> None:
    """Saved and its topics created, audited as the registry audits it."""
    fields = {name: str(value) for name, value in serializer.validated_data.items()}
    target = serializer.validated_data.get("topic") or str(serializer.instance)
    shown = None if before is None else {k: str(v) for k, v in before.items()}
    with audit.action(request.user, "register queue", target, shown, fields) as entry:
        saved = serializer.save()
        created = saved.config().ensure_topics(saved.partitions)
        entry.after = {**entry.after, "topics created": created}


class Enqueue(QueueAPIView):
    @extend_schema(
        operation_id="queues_enqueue",
        parameters=[
            OpenApiParameter(
                IDEMPOTENCY_KEY,
                str,
                OpenApiParameter.HEADER,
                description="a retry with the same key within 24 h writes nothing twice",
            )
        ],
        request=EnqueueSerializer,
        responses={201: EnqueuedSerializer},
    )
    def post(self, request: Request, topic: str) -> Response:
        """Sends one message to the queue as a queue producer does; returns
        once the broker has it, with where it went. Over the payload cap
        (KMQ_MAX_PAYLOAD_BYTES) or what the topic takes: 413, nothing written.
        No report from Kafka in time: 504, outcome unknown. With an
        Idempotency-Key header, a retry within 24 h gets the first send's
        record (Idempotent-Replayed: true), never a second one."""
        queue = self.queue(topic)
        body = EnqueueSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        draft, key = body.validated_data["draft"], request.headers.get(IDEMPOTENCY_KEY)
        replayed = False
        try:
            if key is None:
                written = messages.enqueue(request.user, queue, draft)
            else:
                written, replayed = sent_once.enqueue(request.user, queue, draft, key)
        except TooLarge as exc:
            raise PayloadTooLarge({"value": str(exc)}) from None
        except BadInput as exc:
            raise ValidationError({"partition": str(exc)}) from None
        except sent_once.BadKey as exc:
            raise ValidationError({IDEMPOTENCY_KEY: str(exc)}) from None
        response = Response(
            EnqueuedSerializer(written._asdict()).data, status=status.HTTP_201_CREATED
        )
        if replayed:
            response["Idempotent-Replayed"] = "true"
        return response


class QueueStatsView(QueueAPIView):
    """Named apart from the QueueStats it serializes (console/services/queues/stats.py)."""

    @extend_schema(responses=QueueStatsSerializer)
    def get(self, request: Request, topic: str) -> Response:
        """Depth, in flight, the oldest delivery's age and the DLQ's size:
        offsets and the in-flight view only, no records read."""
        return Response(QueueStatsSerializer(queue_stats(self.queue(topic))).data)


class InFlightList(QueueAPIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("after", str, description="cursor: PARTITION:OFFSET"),
            LIMIT,
        ],
        responses=InFlightPageSerializer,
    )
    def get(self, request: Request, topic: str) -> Response:
        """A page of deliveries in flight, in (partition, offset) order."""
        after, limit = page_after(request, cursors.in_flight_after), page_limit(request)
        queue = self.queue(topic)
        page = in_flight_page(queue, limit, after, masking_for(request.user, queue))
        last = page.rows[-1] if page.rows else None
        cursor = (
            cursors.in_flight_cursor(last["partition"], last["offset"])
            if last is not None and len(page.rows) == limit
            else None
        )
        body = {"count": page.count, "results": page.rows, "next": cursor}
        return Response(InFlightPageSerializer(body).data)


class MessageAction(QueueAPIView):
    """ack / retry / extend / reject one in-flight message by its kmq-id."""

    @extend_schema(
        operation_id="queues_message_action",
        request=ActionSerializer,
        responses=ActionDoneSerializer,
    )
    def post(self, request: Request, topic: str, message_id: str, action: str) -> Response:
        queue = self.queue(topic)
        body = ActionSerializer(data=request.data, context={"action": action})
        body.is_valid(raise_exception=True)
        delivery = messages.act(request.user, queue, message_id, action, **body.validated_data)
        p, o = delivery.partition, delivery.offset
        done = {"id": message_id, "action": action, "partition": p, "offset": o}
        return Response(ActionDoneSerializer(done).data)
