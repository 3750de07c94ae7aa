"""The REST API for a queue's DLQ: browse with filters, redrive one letter."""

from collections.abc import Mapping

from confluent_kafka import Message as KafkaMessage
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from kmqadmin.api.paging import LIMIT, bounded_int, page_limit
from kmqadmin.api.serializers.letters import (
    LetterPageSerializer,
    LetterSerializer,
    RedriveEditsSerializer,
)
from kmqadmin.api.serializers.tasks import TaskStartedSerializer
from kmqadmin.api.views.queues import PayloadTooLarge, QueueAPIView
from kmqadmin.console.services.browsing.masking import (
    NO_MASKED_EDITS,
    masked_letter_filter,
    masking_for,
)
from kmqadmin.console.services.clusters import clients
from kmqadmin.console.services.coordinates import MAX_OFFSET, MAX_PARTITION
from kmqadmin.console.services.jobs import redrive_letters, start
from kmqadmin.console.services.queues import letters
from kmqadmin.console.services.queues.letter_filters import BadFilter
from kmqadmin.console.services.queues.letter_filters import letter_filter as parse_filter
from kmqadmin.kafka.inspect.payload_masking import MaskRules
from kmqadmin.kmq import LetterFilter
from kmqadmin.kmq.draft import TooLarge

FILTERS = [
    OpenApiParameter("partition", int, description="DLQ partition (0)"),
    OpenApiParameter("from", int, description="offset to start at: a page's next"),
    OpenApiParameter("since", str, description="ISO 8601: start at the first letter this late"),
    OpenApiParameter("until", str, description="ISO 8601: letters earlier than this"),
    OpenApiParameter("key", str, description="key contains"),
    OpenApiParameter("reason", str, description="kmq-dlq-reason is (e.g. rejected)"),
    OpenApiParameter("header", str, description="NAME=VALUE: a header has this value"),
    OpenApiParameter("contains", str, description="payload contains (UTF-8)"),
    LIMIT,
]


class LetterList(QueueAPIView):
    @extend_schema(parameters=FILTERS, responses=LetterPageSerializer)
    def get(self, request: Request, topic: str) -> Response:
        """A page of one DLQ partition, oldest first, read from a seek and capped."""
        queue = self.queue(topic)
        masking = masking_for(request.user, queue)
        dead_letters = clients.dead_letters(queue.config())
        params = request.query_params
        partition = bounded_int(params, "partition", 0, 0, MAX_PARTITION)
        partitions = dead_letters.partitions()
        if partition not in partitions:
            raise ValidationError({"partition": f"one of {partitions}"})
        page = dead_letters.page(
            partition,
            page_limit(request),
            start=bounded_int(params, "from", None, 0, MAX_OFFSET),
            match=masked_letter_filter(letter_filter(params), masking),
        )
        body = {
            "partitions": partitions,
            "results": letters.page_fields(page.letters, masking),
            "next": page.next_offset,
        }
        return Response(LetterPageSerializer(body).data)


class BulkRedrive(QueueAPIView):
    @extend_schema(
        operation_id="queues_dlq_bulk_redrive",
        parameters=FILTERS[:1] + FILTERS[2:-1],
        request=None,
        responses={202: TaskStartedSerializer},
    )
    def post(self, request: Request, topic: str) -> Response:
        """Redrives every letter of a partition that matches the filters, as a
        background job; follow it at the returned status URL."""
        queue = self.queue(topic)
        params = request.query_params
        partition = bounded_int(params, "partition", 0, 0, MAX_PARTITION)
        if partition not in clients.dead_letters(queue.config()).partitions():
            raise ValidationError({"partition": "no such DLQ partition"})
        match = letter_filter(params).to_json()
        job = start(redrive_letters, request.user, queue.pk, partition, match, request.user.pk)
        body = {"task": job.id, "status_url": reverse("api:task", args=[job.id])}
        return Response(TaskStartedSerializer(body).data, status=status.HTTP_202_ACCEPTED)


class Redrive(QueueAPIView):
    @extend_schema(
        operation_id="queues_dlq_redrive",
        request=RedriveEditsSerializer,
        responses=LetterSerializer,
    )
    def post(self, request: Request, topic: str, partition: str, offset: str) -> Response:
        """Sends one letter back to the queue, delivery count reset; with a
        body, edited: its fields replace the letter's (a redrive with edits,
        audited with what changed). Answers the letter as it was."""
        queue = self.queue(topic)
        masking = masking_for(request.user, queue)
        body = RedriveEditsSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        edits = body.validated_data["edits"]
        p, o = int(partition), int(offset)
        if not edits:
            found = letters.redrive(request.user, queue, p, o)
            return Response(_letter(found, masking))
        if masking is not None:
            raise PermissionDenied(NO_MASKED_EDITS)
        found = letters.letter(queue, p, o)
        try:
            letters.redrive_with_edits(request.user, queue, found, edits)
        except TooLarge as exc:
            raise PayloadTooLarge({"value": str(exc)}) from None
        return Response(_letter(found, None))


def _letter(found: KafkaMessage, masking: MaskRules | None) -> dict:
    return LetterSerializer(letters.letter_fields(letters.shown_letter(found, masking))).data


def letter_filter(params: Mapping[str, str]) -> LetterFilter:
    """The filter the query parameters ask for (the console's filter form); a 400 if bad."""
    try:
        return parse_filter(params)
    except BadFilter as exc:
        raise ValidationError(exc.errors) from None
