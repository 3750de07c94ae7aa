"""The audit log: its filters and its entries."""

from rest_framework import serializers


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
