"""The REST API for alerts: rules on a queue or schedules topic, silencing,
and the history of alerts started and ended. Every change is audited."""

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kmqadmin.api.paging import LIMIT, bounded_int, page_limit
from kmqadmin.api.serializers.alerts import (
    AlertEventPageSerializer,
    AlertRuleSerializer,
    SilenceSerializer,
)
from kmqadmin.api.views.registrations import CLUSTER, registration
from kmqadmin.console.models import AlertEvent, AlertRule, Queue, ScheduleTopic
from kmqadmin.console.services.alerts import changes
from kmqadmin.console.services.roles import Role

RULES = AlertRule.objects.with_targets()


class AlertRuleList(generics.ListAPIView):
    """Every rule, of every queue and schedules topic."""

    queryset = RULES
    serializer_class = AlertRuleSerializer
    pagination_class = None


@extend_schema(parameters=[CLUSTER])
class TargetRules(generics.ListCreateAPIView):
    """The rules of one queue (/queues/{topic}/alerts/) or schedules topic
    (/schedules/{topic}/alerts/); admins add one."""

    serializer_class = AlertRuleSerializer
    pagination_class = None
    write_role = Role.ADMIN
    model: type[Queue] | type[ScheduleTopic] = Queue

    def target(self) -> Queue | ScheduleTopic:
        return registration(self.request, self.model, self.kwargs["topic"])

    def get_queryset(self) -> QuerySet[AlertRule]:
        return RULES.filter(**self.on())

    def on(self) -> dict[str, Queue | ScheduleTopic]:
        return {"queue" if self.model is Queue else "schedules": self.target()}

    def get_serializer_context(self) -> dict:
        return {**super().get_serializer_context(), "target": self.on()}

    def perform_create(self, serializer: AlertRuleSerializer) -> None:
        rule = AlertRule(**self.on(), **serializer.validated_data)
        serializer.instance = changes.add(self.request.user, rule)


class QueueDefaultRules(APIView):
    write_role = Role.ADMIN

    @extend_schema(
        operation_id="queues_alerts_defaults",
        parameters=[CLUSTER],
        request=None,
        responses={201: AlertRuleSerializer(many=True)},
    )
    def post(self, request: Request, topic: str) -> Response:
        """Adds the rules offered to a new queue (console/services/alerts/rules.py),
        but none of a condition the queue already has a rule for. Told to
        nobody until a receiver is set."""
        rules = changes.add_defaults(request.user, registration(request, Queue, topic))
        shown = AlertRuleSerializer(rules, many=True, context={"request": request})
        return Response(shown.data, status=201)


class AlertRuleDetail(generics.RetrieveUpdateDestroyAPIView):
    queryset = RULES
    serializer_class = AlertRuleSerializer
    write_role = Role.ADMIN

    def perform_update(self, serializer: AlertRuleSerializer) -> None:
        changes.change(self.request.user, serializer.instance, serializer.validated_data)

    def perform_destroy(self, rule: AlertRule) -> None:
        changes.delete(self.request.user, rule)


class Silence(APIView):
    """Operators silence a rule: its alerts still start and end in the
    history, and are told to nobody until the silence ends."""

    @extend_schema(
        operation_id="alerts_silence",
        request=SilenceSerializer,
        responses=AlertRuleSerializer,
    )
    def post(self, request: Request, pk: int) -> Response:
        rule = get_object_or_404(RULES, pk=pk)
        given = SilenceSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        changes.silence(request.user, rule, given.validated_data["minutes"], timezone.now())
        return Response(AlertRuleSerializer(rule, context={"request": request}).data)


class AlertHistory(APIView):
    @extend_schema(
        operation_id="alerts_history",
        parameters=[
            OpenApiParameter("rule", int, description="one rule's alerts"),
            OpenApiParameter("kind", str, enum=AlertEvent.Kind.values),
            OpenApiParameter("after", int, description="cursor: an id"),
            LIMIT,
        ],
        responses=AlertEventPageSerializer,
    )
    def get(self, request: Request) -> Response:
        """Alerts started and ended, newest first, and whom they were told."""
        events = AlertEvent.objects.select_related("rule__queue", "rule__schedules")
        params = request.query_params
        if (rule := bounded_int(params, "rule", None, 1, 2**31 - 1)) is not None:
            events = events.filter(rule_id=rule)
        if params.get("kind"):
            events = events.filter(kind=_kind(params["kind"]))
        if (after := bounded_int(params, "after", None, 1, 2**63 - 1)) is not None:
            events = events.filter(id__lt=after)
        limit = page_limit(request)
        rows = list(events.order_by("-id")[:limit])
        cursor = rows[-1].id if len(rows) == limit else None
        return Response(AlertEventPageSerializer({"results": rows, "next": cursor}).data)


def _kind(given: str) -> str:
    if given not in AlertEvent.Kind.values:
        raise ValidationError({"kind": f"expected one of {', '.join(AlertEvent.Kind.values)}"})
    return given
