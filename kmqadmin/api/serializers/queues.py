"""A queue's registration and its gauges."""

from django.forms.models import model_to_dict
from rest_framework import serializers

from kmqadmin.api.serializers.model_checks import model_check
from kmqadmin.console.models import Cluster, Queue
from kmqadmin.console.models.queues import REGISTRATION_FIELDS
from kmqadmin.console.services.queues.broker_bounds import check_share_bounds
from kmqadmin.kmq.config import BACKENDS


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
        fields = [*REGISTRATION_FIELDS, "markers_topic", "dlq_topic"]

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
        model_check(queue.clean)
        model_check(lambda: check_share_bounds(queue))
        return attrs


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
