"""A queue's messages: enqueue, the in-flight list and the actions on a delivery."""

from rest_framework import serializers

from kmqadmin.api.serializers.payloads import PayloadSerializer
from kmqadmin.console.services.coordinates import MAX_OFFSET, MAX_PARTITION
from kmqadmin.kmq.draft import Draft


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
