"""The REST API for a registered cluster's consumer groups and share
groups: the listing, a group's detail, and the admin-only offset reset with
its dry run. Serializers live here with their views; the share queue's
reset (api/views/share_groups.py) is this reset, on the queue's group."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kmqadmin.console.models import Cluster
from kmqadmin.console.services.groups import listing as groups
from kmqadmin.console.services.roles import Role
from kmqadmin.kafka.admin.groups import KINDS, Kind, Member
from kmqadmin.kafka.admin.offset_reset import MODES, PlannedMove, ResetTarget
from kmqadmin.kafka.client.clock import epoch_ms
from kmqadmin.kmq import names


class ListedSerializer(serializers.Serializer):
    group_id = serializers.CharField(source="group.group_id")
    kind = serializers.ChoiceField(choices=KINDS, source="group.kind")
    state = serializers.CharField(source="group.state")
    type = serializers.CharField(source="group.group_type", help_text="classic, consumer, share")
    queue = serializers.CharField(
        source="queue.topic", allow_null=True, default=None, help_text="the registered queue"
    )


class GroupListSerializer(serializers.Serializer):
    groups = ListedSerializer(many=True)
    errors = serializers.ListField(
        child=serializers.CharField(), help_text="what the broker did not answer, and why"
    )


class MemberSerializer(serializers.Serializer):
    member_id = serializers.CharField()
    client_id = serializers.CharField()
    host = serializers.CharField()
    assignment = serializers.SerializerMethodField(help_text="the topic-partitions it consumes")

    def get_assignment(self, member: Member) -> list[dict]:
        return [{"topic": t, "partition": p} for t, p in member.assignment]


class PartitionLagSerializer(serializers.Serializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    offset = serializers.IntegerField(
        allow_null=True,
        help_text="committed offset (consumer group) or start offset (share group); null: none yet",
    )
    log_start = serializers.IntegerField()
    end = serializers.IntegerField(help_text="log end (high watermark)")
    lag = serializers.IntegerField(
        allow_null=True, help_text="share groups: an upper bound (acknowledged out of order)"
    )


class GroupDetailSerializer(serializers.Serializer):
    group_id = serializers.CharField(source="group.group_id")
    kind = serializers.ChoiceField(choices=KINDS, source="group.kind")
    state = serializers.CharField(source="group.state")
    type = serializers.CharField(source="group.group_type")
    members = MemberSerializer(many=True, source="group.members")
    partitions = PartitionLagSerializer(many=True)
    total_lag = serializers.IntegerField()
    queue = serializers.CharField(source="queue.topic", allow_null=True, default=None)


class TargetSerializer(serializers.Serializer):
    to = serializers.ChoiceField(choices=MODES)
    at = serializers.DateTimeField(required=False, help_text="with to=time; ISO 8601")
    offset = serializers.IntegerField(required=False, min_value=0, help_text="with to=offset")
    partition = serializers.IntegerField(required=False, min_value=0, help_text="only this one")

    def validate(self, data: dict) -> dict:
        if data["to"] == "time" and data.get("at") is None:
            raise serializers.ValidationError({"at": "resetting to a time needs the time"})
        if data.get("at") is not None and epoch_ms(data["at"]) < 0:
            raise serializers.ValidationError({"at": "the time must be after 1970"})
        if data["to"] == "offset" and data.get("offset") is None:
            raise serializers.ValidationError({"offset": "resetting to an offset needs it"})
        return data

    def target(self, topic: str | None) -> ResetTarget:
        data = self.validated_data
        value = {"time": lambda: epoch_ms(data["at"]), "offset": lambda: data["offset"]}
        mode = data["to"]
        return ResetTarget(
            mode, value[mode]() if mode in value else None, topic, data.get("partition")
        )


class PlanSerializer(TargetSerializer):
    """A reset, or its dry run, or applying a dry run's plan exactly."""

    dry_run = serializers.BooleanField(
        default=False, help_text="true: answer the planned offsets, move nothing"
    )
    offsets = serializers.DictField(
        child=serializers.IntegerField(min_value=0),
        required=False,
        help_text='a dry run\'s offsets, {"topic:partition": offset}: apply exactly these',
    )

    def validate_offsets(self, offsets: dict[str, int]) -> dict:
        try:
            return groups.parse_offsets(offsets)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None


class GroupResetSerializer(PlanSerializer):
    topic = serializers.CharField(required=False, help_text="only this topic")

    def validate_topic(self, topic: str) -> str:
        try:
            return names.check_topic(topic)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def validate(self, data: dict) -> dict:
        data = super().validate(data)
        if data.get("partition") is not None and not data.get("topic"):
            raise serializers.ValidationError({"partition": "a partition needs its topic"})
        return data


class MoveSerializer(serializers.Serializer):
    topic = serializers.SerializerMethodField()
    partition = serializers.SerializerMethodField()
    current = serializers.IntegerField(allow_null=True, help_text="null: none yet")
    new = serializers.IntegerField()

    def get_topic(self, move: PlannedMove) -> str:
        return move.partition[0]

    def get_partition(self, move: PlannedMove) -> int:
        return move.partition[1]


class ResetAnswerSerializer(serializers.Serializer):
    dry_run = serializers.BooleanField(help_text="true: nothing was moved")
    moves = MoveSerializer(many=True, help_text="current -> new offset per partition")
    offsets = serializers.SerializerMethodField(
        help_text='"topic:partition": new offset; post a dry run\'s back to apply exactly it'
    )
    errors = serializers.SerializerMethodField(help_text='"topic:partition": why refused')

    def get_offsets(self, answer: dict) -> dict[str, int]:
        return {groups.named(m.partition): m.new for m in answer["moves"]}

    def get_errors(self, answer: dict) -> dict[str, str]:
        return {groups.named(p): e for p, e in answer["errors"].items()}


class GroupList(APIView):
    @extend_schema(operation_id="clusters_groups", responses=GroupListSerializer)
    def get(self, request: Request, cluster: str) -> Response:
        """Every consumer group and share group of a registered cluster, with
        the registered queue each serves."""
        shown = groups.listing(groups.cluster_or_404(cluster))
        listed = [row for kind in KINDS for row in shown.groups.get(kind, [])]
        return Response(GroupListSerializer({"groups": listed, "errors": shown.errors}).data)


class GroupDetail(APIView):
    @extend_schema(operation_id="clusters_group", responses=GroupDetailSerializer)
    def get(self, request: Request, cluster: str, kind: Kind, group_id: str) -> Response:
        """A group's state, members and per-partition offsets and lag (404:
        no such group)."""
        found = groups.cluster_or_404(cluster)
        shown = groups.detail(found, kind, group_id)
        return Response(GroupDetailSerializer(shown).data)


class GroupReset(APIView):
    write_role = Role.ADMIN

    @extend_schema(
        operation_id="clusters_group_reset",
        request=GroupResetSerializer,
        responses=ResetAnswerSerializer,
    )
    def post(self, request: Request, cluster: str, kind: Kind, group_id: str) -> Response:
        """Resets an empty group's offsets (admins; audited). With dry_run,
        the plan (current -> new per partition) and nothing moved; with a
        plan's ``offsets``, exactly those. 409 while members are connected,
        400 for an offset outside its log or an unknown topic."""
        found = groups.cluster_or_404(cluster)
        body = GroupResetSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        target = body.target(body.validated_data.get("topic"))
        return reset(request, body, found, kind, group_id, target)


def reset(
    request: Request,
    body: PlanSerializer,
    cluster: Cluster,
    kind: Kind,
    group_id: str,
    target: ResetTarget,
    *,
    create: bool = False,
) -> Response:
    """The reset both endpoints make: the plan, or the plan (or the one
    given) applied. ``create``: a share queue's group that does not exist
    yet is made by it."""
    data = body.validated_data
    if data["dry_run"]:
        planned = groups.preview(cluster, kind, group_id, target, create=create)
        answer = {"dry_run": True, "moves": planned.moves, "errors": {}}
    else:
        offsets = (
            data.get("offsets")
            or groups.preview(cluster, kind, group_id, target, create=create).offsets
        )
        done = groups.apply(request.user, cluster, kind, group_id, target, offsets, create=create)
        answer = {"dry_run": False, "moves": done.moves, "errors": done.errors}
    return Response(ResetAnswerSerializer(answer).data)
