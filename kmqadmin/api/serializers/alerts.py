"""Alert rules, silences and the alerts they raised."""

import copy

from rest_framework import serializers

from kmqadmin.api.serializers.model_checks import model_check
from kmqadmin.console.models import AlertEvent, AlertRule
from kmqadmin.console.models.alerts import MAX_THRESHOLD, MAX_WINDOW_MINUTES
from kmqadmin.console.services import secrets_at_rest
from kmqadmin.console.services.alerts.notifications import seen_by
from kmqadmin.console.services.alerts.rules import MAX_EMAILS, MAX_SILENCE_MINUTES
from kmqadmin.console.services.roles import role_of


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
        model_check(rule.clean)
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
