"""Request and response shapes. The OpenAPI schema is generated from these and
every view builds its answer with one, so what is documented is what is sent."""

import copy
from collections.abc import Callable
from datetime import datetime

from django.core.exceptions import ValidationError as DjangoValidationError
from django.forms.models import model_to_dict
from rest_framework import serializers
from rest_framework.fields import get_error_detail

from kmqadmin.console.models import AlertEvent, AlertRule, Cluster, Queue
from kmqadmin.console.models.alerts import MAX_THRESHOLD, MAX_WINDOW_MINUTES
from kmqadmin.console.services import secrets_at_rest
from kmqadmin.console.services.alerts.notifications import seen_by
from kmqadmin.console.services.alerts.rules import MAX_EMAILS, MAX_SILENCE_MINUTES
from kmqadmin.console.services.coordinates import MAX_OFFSET, MAX_PARTITION
from kmqadmin.console.services.queues.broker_bounds import check_share_bounds
from kmqadmin.console.services.roles import role_of
from kmqadmin.console.validators import given_text, topic_name
from kmqadmin.kafka.client.clock import epoch_ms
from kmqadmin.kmq.config import BACKENDS
from kmqadmin.kmq.draft import ENCODINGS, Draft, decode_value
from kmqadmin.kmq.given_headers import BadInput, check_headers
from kmqadmin.scheduler import wire


class QueueSerializer(serializers.ModelSerializer):
    """A registration: read by anyone, written by admins (POST /queues/,
    PATCH /queues/{topic}/). The model's own rules apply (Queue.clean)."""

    cluster = serializers.SlugRelatedField(slug_field="name", queryset=Cluster.objects.all())
    backend = serializers.ChoiceField(
        choices=BACKENDS,
        default="kmq",
        error_messages={
            "invalid_choice": f"{{input}} is not a backend: one of {', '.join(BACKENDS)}"
        },
        help_text="kmq: markers and a tracker; share: a Kafka share group (KIP-932). "
        "Not switchable while messages are in flight (409).",
    )
    markers_topic = serializers.SerializerMethodField(
        help_text="null for a share queue: it has none"
    )

    class Meta:
        model = Queue
        fields = [
            "cluster",
            "topic",
            "group_id",
            "backend",
            "marker_format",
            "partitions",
            "message_timeout_ms",
            "max_redeliveries",
            "markers_topic",
            "dlq_topic",
            "markers_topic_override",
            "dlq_topic_override",
            "backoff_initial_ms",
            "backoff_multiplier",
            "backoff_max_ms",
            "mask_json_paths",
            "mask_headers",
            "mask_patterns",
            "mask_operators",
        ]

    def get_markers_topic(self, queue: Queue) -> str | None:
        return queue.markers_topic if queue.backend == "kmq" else None

    def validate(self, attrs: dict) -> dict:
        """Queue.clean on the queue as it would be saved, then the broker's
        bounds on it, the errors under the fields they name (a share queue's
        markers override...)."""
        saved = {} if self.instance is None else model_to_dict(self.instance, exclude=["id"])
        if "cluster" in saved:
            saved["cluster"] = self.instance.cluster
        queue = Queue(**{**saved, **attrs})
        _model_clean(queue.clean)
        _model_clean(lambda: check_share_bounds(queue))
        return attrs


def _model_clean(check: Callable[[], None]) -> None:
    """A check of the model's, its errors under the fields they name."""
    try:
        check()
    except DjangoValidationError as exc:
        raise serializers.ValidationError(get_error_detail(exc)) from None


class PayloadSerializer(serializers.Serializer):
    """A record to write: value as text, JSON (checked, sent as written) or
    base64, key, headers."""

    value = serializers.CharField(allow_blank=True, trim_whitespace=False)
    encoding = serializers.ChoiceField(choices=ENCODINGS, default="utf-8")
    key = serializers.CharField(
        required=False, allow_null=True, trim_whitespace=False, validators=[given_text]
    )
    headers = serializers.DictField(
        child=serializers.CharField(trim_whitespace=False), default=dict
    )

    def validate(self, attrs: dict) -> dict:
        attrs["payload"] = _payload(attrs["value"], attrs["encoding"])
        _check_headers(attrs["headers"])
        return attrs


def _payload(value: str, encoding: str) -> bytes:
    try:
        return decode_value(value, encoding)
    except BadInput as exc:
        raise serializers.ValidationError({"value": str(exc)}) from None


def _check_headers(headers: dict[str, str]) -> None:
    try:
        check_headers(headers)
    except BadInput as exc:
        raise serializers.ValidationError({"headers": str(exc)}) from None


class EnqueueSerializer(PayloadSerializer):
    partition = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=MAX_PARTITION,
        help_text="the partitioner's choice when absent",
    )

    def validate(self, attrs: dict) -> dict:
        attrs = super().validate(attrs)
        key = attrs.get("key")
        attrs["draft"] = Draft(
            value=attrs["payload"],
            key=None if key is None else key.encode(),
            headers=tuple((name, value.encode()) for name, value in attrs["headers"].items()),
            partition=attrs.get("partition"),
        )
        return attrs


class EnqueuedSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="kmq-id: the message page's address")
    partition = serializers.IntegerField()
    offset = serializers.IntegerField()


class RedriveEditsSerializer(serializers.Serializer):
    """What to send instead of the letter's own: each field given replaces
    it (headers: all the user's headers; kmq's own are the redrive's)."""

    value = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    encoding = serializers.ChoiceField(choices=ENCODINGS, required=False)
    key = serializers.CharField(
        required=False, allow_null=True, trim_whitespace=False, validators=[given_text]
    )
    headers = serializers.DictField(
        child=serializers.CharField(trim_whitespace=False), required=False
    )

    def validate(self, attrs: dict) -> dict:
        """``edits``: the given fields as a Draft's (bytes)."""
        edits: dict = {}
        if "value" in attrs:
            edits["value"] = _payload(attrs["value"], attrs.get("encoding", "utf-8"))
        elif "encoding" in attrs:
            raise serializers.ValidationError({"encoding": "an encoding needs a value"})
        if "key" in attrs:
            edits["key"] = None if attrs["key"] is None else attrs["key"].encode()
        if "headers" in attrs:
            _check_headers(attrs["headers"])
            edits["headers"] = tuple((n, v.encode()) for n, v in attrs["headers"].items())
        return {"edits": edits}


class ScheduleSerializer(PayloadSerializer):
    """A schedule version: ``value`` goes to ``target_topic`` (keyed by ``key``)
    at ``at``. Writing an existing id makes a new version of it."""

    at = serializers.DateTimeField(help_text="ISO 8601; without an offset, UTC")
    target_topic = serializers.CharField(validators=[topic_name])

    def validate_at(self, at: datetime) -> datetime:
        try:
            wire.check_due(epoch_ms(at))
        except wire.ScheduleError as exc:
            raise serializers.ValidationError(str(exc)) from None
        return at


class NewScheduleSerializer(ScheduleSerializer):
    id = serializers.CharField(
        max_length=1000, validators=[given_text], help_text="the schedule's id: its record key"
    )


class UpcomingSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="the key as text; undecodable bytes as U+FFFD")
    ref = serializers.CharField(
        help_text="what addresses it in URLs: the key's text when it is UTF-8, "
        "else ~b64: and the key in base64url"
    )
    due_ms = serializers.IntegerField(help_text="epoch ms")
    target_topic = serializers.CharField()
    partition = serializers.IntegerField()
    offset = serializers.IntegerField()
    allowed = serializers.BooleanField(
        help_text="false: the topic's allowlist does not hold the target; it never fires"
    )


class UpcomingPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    complete = serializers.BooleanField(help_text="false while the topic is still being read")
    results = UpcomingSerializer(many=True)
    next = serializers.CharField(allow_null=True, help_text="cursor for ?after=")


class InFlightSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="kmq-id: the same on every copy of the message")
    partition = serializers.IntegerField()
    offset = serializers.IntegerField(help_text="of the copy now delivered")
    delivery_count = serializers.IntegerField()
    deadline_ms = serializers.IntegerField(help_text="epoch ms; 0 = due now")
    key = serializers.CharField(allow_null=True)


class InFlightPageSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="messages in flight")
    results = InFlightSerializer(many=True)
    next = serializers.CharField(allow_null=True, help_text="cursor for ?after=")


class ActionSerializer(serializers.Serializer):
    partition = serializers.IntegerField(
        min_value=0,
        max_value=MAX_PARTITION,
        help_text="the copy acted on, as the in-flight list shows it: "
        "the action lands on it or nothing is done (409)",
    )
    offset = serializers.IntegerField(min_value=0, max_value=MAX_OFFSET, help_text="of that copy")
    ms = serializers.IntegerField(
        min_value=1,
        max_value=7 * 24 * 3_600_000,
        required=False,
        help_text="extend: the new deadline is now + ms (required there)",
    )
    reason = serializers.CharField(
        max_length=500, allow_blank=True, default="", help_text="reject: kept in the DLQ record"
    )

    def validate(self, attrs: dict) -> dict:
        if self.context.get("action") == "extend" and "ms" not in attrs:
            raise serializers.ValidationError({"ms": "required to extend"})
        return attrs


class ActionDoneSerializer(serializers.Serializer):
    id = serializers.CharField()
    action = serializers.CharField()
    partition = serializers.IntegerField()
    offset = serializers.IntegerField()


class LetterSerializer(serializers.Serializer):
    partition = serializers.IntegerField()
    offset = serializers.IntegerField()
    timestamp_ms = serializers.IntegerField(help_text="the message's own timestamp (produced)")
    dead_lettered_ms = serializers.IntegerField(
        allow_null=True,
        help_text="when the letter was written (its kmq-dlq-at header); null when the "
        "tracker that wrote it does not record it",
    )
    id = serializers.CharField(allow_null=True, help_text="kmq-id")
    reason = serializers.CharField(allow_null=True)
    detail = serializers.CharField(allow_null=True)
    key = serializers.CharField(allow_null=True)
    value = serializers.CharField(allow_null=True)
    encoding = serializers.ChoiceField(
        choices=["utf-8", "base64", "hex"],
        help_text="hex (key and value) when reason is undecodable: its headers do not decode",
    )
    headers = serializers.DictField(child=serializers.CharField())
    duplicate_of = serializers.IntegerField(
        allow_null=True,
        required=False,
        help_text="offset of an earlier letter in this page of the same failed record "
        "(same kmq-id and timestamp: the share backend moves to the DLQ at least once); "
        "a bulk redrive sends the message back once. null: none seen",
    )


class LetterPageSerializer(serializers.Serializer):
    partitions = serializers.ListField(child=serializers.IntegerField())
    results = LetterSerializer(many=True)
    next = serializers.IntegerField(allow_null=True, help_text="offset for ?from= (same partition)")


class TaskStartedSerializer(serializers.Serializer):
    task = serializers.CharField()
    status_url = serializers.CharField()


class TaskStatusSerializer(serializers.Serializer):
    state = serializers.CharField(help_text="PENDING, STARTED, PROGRESS, SUCCESS or FAILURE")
    progress = serializers.DictField(allow_null=True, help_text="counts and fraction done")


class QueueStatsSerializer(serializers.Serializer):
    depth = serializers.IntegerField(
        help_text="messages the workers have not taken yet: records, not offsets (transaction "
        "markers and aborted records are not counted)"
    )
    in_flight = serializers.IntegerField(
        allow_null=True,
        help_text="null for a share queue: the broker's share group holds its deliveries",
    )
    oldest_in_flight_ms = serializers.IntegerField(
        allow_null=True, help_text="how long ago the oldest open delivery was due to start"
    )
    dead_letters = serializers.IntegerField(
        help_text="letters in the DLQ: records, not offsets (the tracker's transaction markers "
        "are not counted)"
    )
    redelivered_per_min = serializers.FloatField(
        help_text="redeliveries per minute over the last few minutes, as the trackers counted"
    )
    dead_lettered_per_min = serializers.FloatField(
        help_text="messages moved to the DLQ per minute over the same minutes"
    )
    share_held = serializers.IntegerField(
        allow_null=True,
        help_text="share queues: records the consumers held, acquired and not yet "
        "acknowledged, at their latest per-minute reports; null for kmq queues",
    )
    refused_acks_per_min = serializers.FloatField(
        allow_null=True,
        help_text="share queues: acknowledgements the broker refused, per minute; null for kmq",
    )
    expired_locks_per_min = serializers.FloatField(
        allow_null=True,
        help_text="share queues: acknowledgements made after the lock ran out, per minute; "
        "null for kmq",
    )


class AuditFilterSerializer(serializers.Serializer):
    """The audit log's filters, as the console's (forms/audit.py), and ``until``."""

    user = serializers.CharField(required=False, help_text="who acted, by username")
    action = serializers.CharField(required=False, help_text="e.g. ack, sqs.DeleteMessageBatch")
    target = serializers.CharField(required=False, help_text="the target contains this")
    since = serializers.DateTimeField(required=False, help_text="ISO 8601: at or after")
    until = serializers.DateTimeField(required=False, help_text="ISO 8601: before")
    after = serializers.IntegerField(
        required=False, min_value=1, max_value=2**63 - 1, help_text="cursor: an id"
    )

    def validate(self, attrs: dict) -> dict:
        if "since" in attrs and "until" in attrs and attrs["since"] >= attrs["until"]:
            raise serializers.ValidationError({"until": "must be later than since"})
        return attrs


class AuditEntrySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    user = serializers.CharField(source="username", help_text="as named when it acted")
    action = serializers.CharField()
    target = serializers.CharField()
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)
    status = serializers.ChoiceField(
        choices=["pending", "done", "failed", "unknown"],
        help_text="pending: the effect's outcome is not known yet (or its process died); "
        "unknown: Kafka did not say in time whether the write took",
    )
    error = serializers.CharField(allow_blank=True)


class AuditPageSerializer(serializers.Serializer):
    results = AuditEntrySerializer(many=True)
    next = serializers.IntegerField(allow_null=True, help_text="cursor for ?after=")


class TopicSerializer(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.CharField(
        help_text="what the topic is to kmqadmin: queue, dlq, markers, schedules, … or other"
    )


class BrowsedHeaderSerializer(serializers.Serializer):
    name = serializers.CharField()
    value = serializers.CharField(allow_null=True)
    encoding = serializers.ChoiceField(choices=["utf-8", "base64"])


class BrowsedRecordSerializer(serializers.Serializer):
    """A record as written, or masked for a masked audience; bytes that are
    not UTF-8 in base64, said by the field's encoding."""

    topic = serializers.CharField()
    partition = serializers.IntegerField()
    offset = serializers.IntegerField()
    timestamp_ms = serializers.IntegerField()
    key = serializers.CharField(allow_null=True)
    key_encoding = serializers.ChoiceField(choices=["utf-8", "base64"])
    value = serializers.CharField(allow_null=True)
    value_encoding = serializers.ChoiceField(choices=["utf-8", "base64"])
    headers = BrowsedHeaderSerializer(
        many=True,
        allow_null=True,
        help_text="in the record's order, a name may repeat; null when the header "
        "names do not decode (the record is undecodable; key and value still shown)",
    )


class RecordPageSerializer(serializers.Serializer):
    partitions = serializers.ListField(child=serializers.IntegerField())
    records = BrowsedRecordSerializer(
        many=True, help_text="oldest first forward, newest first backward"
    )
    start = serializers.IntegerField(help_text="the offset the seek resolved to")
    scanned = serializers.IntegerField(help_text="records read to find these")
    stopped = serializers.ChoiceField(
        choices=["end", "records", "scanned", "time"],
        help_text="what ended the read: the partition's end, a full page, or a cap "
        "(scanned, time): then there may be more to find from next_offset",
    )
    next_offset = serializers.IntegerField(
        allow_null=True, help_text="go on from here, same direction (start=offset)"
    )
    low = serializers.IntegerField(help_text="the partition's first offset")
    high = serializers.IntegerField(help_text="the partition's end offset")


class RenderingSerializer(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()
    text = serializers.CharField()
    error = serializers.CharField(
        allow_blank=True, help_text="why it could not decode the record; text is then raw"
    )


class RecordDetailSerializer(serializers.Serializer):
    record = BrowsedRecordSerializer()
    renderings = RenderingSerializer(
        many=True, help_text="every rendering that applies, as the console shows them"
    )
    masked = serializers.BooleanField(help_text="shown masked, as your role sees this queue")


class EmailLines(serializers.ListField):
    """Addresses as a list here, one per line in the model."""

    child = serializers.EmailField()

    def to_representation(self, lines: str) -> list[str]:
        return [line.strip() for line in lines.splitlines() if line.strip()]

    def to_internal_value(self, data: object) -> str:
        return "\n".join(super().to_internal_value(data))


# What the checks set on a rule (and silencing, by its own endpoint): read only.
RULE_STATE = ["silenced_until", "firing", "value", "checked_at", "check_error", "delivery_error"]


class AlertRuleSerializer(serializers.ModelSerializer):
    """A rule on the queue or schedules topic its URL names; read by anyone,
    written by admins (its webhook is a URL the workers will call, and only
    admins see more of it than its host: Slack's hold their secret). The
    model's own checks apply (AlertRule.clean)."""

    target_kind = serializers.CharField(read_only=True, help_text="queue or schedules")
    target = serializers.CharField(read_only=True, help_text="the topic")
    cluster = serializers.CharField(source="on.cluster.name", read_only=True)
    condition = serializers.ChoiceField(
        choices=AlertRule.Condition.choices,
        error_messages={
            "invalid_choice": "{input} is not a condition: one of "
            + ", ".join(AlertRule.Condition.values)
        },
    )
    threshold = serializers.IntegerField(
        min_value=0, max_value=MAX_THRESHOLD, help_text="fires when the value is above this"
    )
    window_minutes = serializers.IntegerField(
        min_value=1,
        max_value=MAX_WINDOW_MINUTES,
        default=10,
        help_text="dead letters arriving and redeliveries: the minutes counted",
    )
    webhook_url = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=2000,
        help_text="http(s); empty: none. Shown whole to admins only",
    )
    webhook_secret = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="signs each body: X-Kmq-Signature: sha256=<HMAC-SHA256 hex>; never shown again",
    )
    has_webhook_secret = serializers.SerializerMethodField()
    emails = EmailLines(required=False, max_length=MAX_EMAILS, help_text="who gets an email")

    class Meta:
        model = AlertRule
        fields = [
            "id",
            "target_kind",
            "target",
            "cluster",
            "condition",
            "threshold",
            "window_minutes",
            "webhook_url",
            "webhook_secret",
            "has_webhook_secret",
            "slack",
            "emails",
            "enabled",
            *RULE_STATE,
        ]
        read_only_fields = RULE_STATE

    def get_has_webhook_secret(self, rule: AlertRule) -> bool:
        return bool(rule.webhook_secret)

    def to_representation(self, rule: AlertRule) -> dict:
        shown = super().to_representation(rule)
        request = self.context.get("request")
        role = None if request is None else role_of(request.user)
        shown["webhook_url"] = seen_by(rule.webhook_url, role) if rule.webhook_url else ""
        return shown

    def validate(self, attrs: dict) -> dict:
        """AlertRule.clean on the rule as it would be saved, its errors
        under the fields they name."""
        if "webhook_secret" in attrs:
            secret = attrs.pop("webhook_secret")
            attrs["webhook_secret"] = secrets_at_rest.encrypt(secret) if secret else b""
        rule = copy.copy(self.instance) if self.instance else AlertRule(**self.context["target"])
        for name, value in attrs.items():
            setattr(rule, name, value)
        _model_clean(rule.clean)
        return attrs


class SilenceSerializer(serializers.Serializer):
    minutes = serializers.IntegerField(
        min_value=0, max_value=MAX_SILENCE_MINUTES, help_text="0: end the silence now"
    )


class AlertEventSerializer(serializers.ModelSerializer):
    rule = serializers.IntegerField(source="rule_id")
    target = serializers.CharField(source="rule.target")
    condition = serializers.CharField(source="rule.condition")

    class Meta:
        model = AlertEvent
        fields = [
            "id",
            "at",
            "rule",
            "target",
            "condition",
            "kind",
            "value",
            "threshold",
            "told",
            "attempts",
            "error",
        ]


class AlertEventPageSerializer(serializers.Serializer):
    results = AlertEventSerializer(many=True)
    next = serializers.IntegerField(allow_null=True, help_text="cursor for ?after=")
