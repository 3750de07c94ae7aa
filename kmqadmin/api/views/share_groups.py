"""The REST API for a share queue's group: what the console's section shows,
and the admin-only reset of its start offset (a group reset, api/views/groups.py,
on the queue's group and topic).

The view's serializers live here with it: nothing else uses them.
"""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from kmqadmin.api.views.groups import (
    MemberSerializer,
    PlanSerializer,
    ResetAnswerSerializer,
    reset,
)
from kmqadmin.api.views.queues import QueueAPIView
from kmqadmin.console.services.groups import share_groups
from kmqadmin.console.services.roles import Role


class GroupSerializer(serializers.Serializer):
    exists = serializers.BooleanField(help_text="false: no consumer joined yet")
    state = serializers.CharField(help_text="Empty, Stable, Dead… as the coordinator says")
    epoch = serializers.IntegerField()
    members = MemberSerializer(many=True)


class PartitionProgressSerializer(serializers.Serializer):
    partition = serializers.IntegerField()
    start_offset = serializers.IntegerField(
        allow_null=True,
        help_text="share-partition start offset (everything below is done); null: not started",
    )
    log_start = serializers.IntegerField()
    end = serializers.IntegerField(help_text="high watermark")
    lag = serializers.IntegerField(allow_null=True)
    lag_exact = serializers.BooleanField(
        help_text="false: end minus start, an upper bound (records past the start may be "
        "acknowledged out of order)"
    )
    error = serializers.CharField(allow_null=True)


class SettingsSerializer(serializers.Serializer):
    lock_duration_ms = serializers.IntegerField()
    auto_offset_reset = serializers.CharField()
    isolation_level = serializers.CharField()
    delivery_count_limit = serializers.IntegerField(
        source="limits.delivery_count_limit", help_text="the broker's"
    )
    min_lock_duration_ms = serializers.IntegerField(source="limits.min_lock_ms")
    max_lock_duration_ms = serializers.IntegerField(source="limits.max_lock_ms")


class MinuteSerializer(serializers.Serializer):
    minute = serializers.IntegerField(help_text="epoch ms, start of the minute")
    accepted = serializers.IntegerField()
    released = serializers.IntegerField()
    rejected = serializers.IntegerField()
    dead_lettered = serializers.IntegerField()
    delayed = serializers.IntegerField()
    acquired = serializers.IntegerField(help_text="records the clients acquired")
    refused = serializers.IntegerField(help_text="acknowledgements the broker refused")
    expired = serializers.IntegerField(
        help_text="acknowledgements made after the lock ran out (raised, never sent)"
    )
    in_flight = serializers.IntegerField(
        help_text="what the clients held (acquired, unacknowledged) when they reported"
    )


class ConsumerSerializer(serializers.Serializer):
    client = serializers.CharField(help_text="the client's id: its share-group member id")
    member = serializers.BooleanField(help_text="in the group now")
    last_report = serializers.IntegerField(source="counts.minute", help_text="epoch ms")
    acquired = serializers.IntegerField(source="counts.acquired", help_text="over the window")
    held = serializers.IntegerField(
        source="counts.in_flight", help_text="acquired and unacknowledged at its last report"
    )
    refused = serializers.IntegerField(source="counts.refused", help_text="over the window")
    expired = serializers.IntegerField(source="counts.expired", help_text="over the window")


class CountsSerializer(serializers.Serializer):
    minutes = MinuteSerializer(
        many=True, help_text="the last hour and the current minute so far, oldest first"
    )
    bad_records = serializers.IntegerField()
    complete = serializers.BooleanField()


class ShareGroupSerializer(serializers.Serializer):
    group = GroupSerializer(allow_null=True)
    progress = PartitionProgressSerializer(many=True)
    settings = SettingsSerializer(allow_null=True)
    counts = CountsSerializer(allow_null=True)
    consumers = ConsumerSerializer(
        many=True, help_text="every client that reported in the window, members first"
    )
    errors = serializers.ListField(
        child=serializers.CharField(), help_text="what the broker did not answer, and why"
    )


class ShareGroupView(QueueAPIView):
    @extend_schema(operation_id="queues_share_group", responses=ShareGroupSerializer)
    def get(self, request: Request, topic: str) -> Response:
        """A share queue's group: members, start offsets and lag, settings and
        the last hour's per-minute counts (409 for a kmq queue)."""
        shown = share_groups.view(self.queue(topic))
        return Response(ShareGroupSerializer(shown).data)


class ShareGroupReset(QueueAPIView):
    write_role = Role.ADMIN

    @extend_schema(
        operation_id="queues_share_group_reset",
        request=PlanSerializer,
        responses=ResetAnswerSerializer,
    )
    def post(self, request: Request, topic: str) -> Response:
        """Moves the share group's start offset on every partition, or the
        one given (admins; audited); with dry_run, the plan and nothing moved.
        409 while consumers are connected, or for a kmq queue."""
        queue = self.queue(topic)
        share_groups.check_share(queue)
        body = PlanSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        target = body.target(queue.topic)
        return reset(request, body, queue.cluster, "share", queue.group_id, target, create=True)
