"""A schedules topic's schedules: one written, the upcoming ones."""

from datetime import datetime

from rest_framework import serializers

from kmqadmin.api.serializers.payloads import PayloadSerializer
from kmqadmin.console.validators import given_text, topic_name
from kmqadmin.kafka.client.clock import epoch_ms
from kmqadmin.scheduler import wire


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
