"""The REST API for a queue's DLQ: browse with filters, redrive one letter."""

import base64

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.fields import DateTimeField
from rest_framework.request import Request
from rest_framework.response import Response

from kmqadmin.console import actions, clients
from kmqadmin.kmq import LetterFilter
from kmqadmin.kmq import headers as h
from kmqadmin.workers.tasks import redrive_letters

from . import serializers as s
from .paging import LIMIT, page_limit
from .queues import QueueAPIView

FILTERS = [
    OpenApiParameter("partition", int, description="DLQ partition (0)"),
    OpenApiParameter("from", int, description="offset to start at: a page's next"),
    OpenApiParameter("since", str, description="ISO 8601: start at the first letter this late"),
    OpenApiParameter("key", str, description="key contains"),
    OpenApiParameter("reason", str, description="kmq-dlq-reason is (e.g. rejected)"),
    OpenApiParameter("header", str, description="NAME=VALUE: a header has this value"),
    OpenApiParameter("contains", str, description="payload contains (UTF-8)"),
    LIMIT,
]


class LetterList(QueueAPIView):
    @extend_schema(parameters=FILTERS, responses=s.LetterPageSerializer)
    def get(self, request: Request, topic: str) -> Response:
        """A page of one DLQ partition, oldest first, read from a seek and capped."""
        letters = clients.dead_letters(self.queue(topic).config())
        params = request.query_params
        partition = _int(params, "partition", 0)
        partitions = letters.partitions()
        if partition not in partitions:
            raise ValidationError({"partition": f"one of {partitions}"})
        page = letters.page(
            partition,
            page_limit(request),
            start=_int(params, "from", None),
            match=letter_filter(params),
        )
        return Response(
            {
                "partitions": partitions,
                "results": [_shown(letter) for letter in page.letters],
                "next": page.next_offset,
            }
        )


class BulkRedrive(QueueAPIView):
    @extend_schema(
        parameters=FILTERS[:1] + FILTERS[3:-1],
        request=None,
        responses={202: s.TaskStartedSerializer},
    )
    def post(self, request: Request, topic: str) -> Response:
        """Redrives every letter of a partition that matches the filters, as a
        background job; follow it at the returned status URL."""
        queue = self.queue(topic)
        params = request.query_params
        partition = _int(params, "partition", 0)
        if partition not in clients.dead_letters(queue.config()).partitions():
            raise ValidationError({"partition": "no such DLQ partition"})
        match = letter_filter(params).to_json()
        job = redrive_letters.delay(queue.pk, partition, match, request.user.pk)
        body = {"task": job.id, "status_url": f"/api/tasks/{job.id}"}
        return Response(body, status=status.HTTP_202_ACCEPTED)


class Redrive(QueueAPIView):
    @extend_schema(request=None, responses=s.LetterSerializer)
    def post(self, request: Request, topic: str, partition: str, offset: str) -> Response:
        """Sends one letter back to the queue, delivery count reset."""
        queue = self.queue(topic)
        return Response(_shown(actions.redrive(request.user, queue, int(partition), int(offset))))


def _int(params, name: str, default: int | None) -> int | None:
    text = params.get(name)
    if text in (None, ""):
        return default
    try:
        return int(text)
    except ValueError:
        raise ValidationError({name: "not a number"}) from None


def _since(text: str | None) -> int | None:
    if not text:
        return None
    try:
        return round(DateTimeField().to_internal_value(text).timestamp() * 1000)
    except ValidationError:
        raise ValidationError({"since": "expected ISO 8601, e.g. 2026-11-22T10:00:00Z"}) from None


def letter_filter(params) -> LetterFilter:
    """The filter the query (or body) parameters ask for."""
    header = None
    if text := params.get("header"):
        name, sep, value = text.partition("=")
        if not sep or not name:
            raise ValidationError({"header": "expected NAME=VALUE"})
        header = (name, value.encode())

    def given(name: str) -> bytes | None:
        return text.encode() if (text := params.get(name)) else None

    return LetterFilter(
        key=given("key"),
        reason=given("reason"),
        header=header,
        contains=given("contains"),
        since_ms=_since(params.get("since")),
    )


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode(errors="replace")


def _shown(letter) -> dict:
    record_headers = letter.headers() or []
    value, encoding = letter.value(), "utf-8"
    try:
        shown_value = None if value is None else value.decode()
    except UnicodeDecodeError:
        shown_value, encoding = base64.b64encode(value).decode(), "base64"
    return {
        "partition": letter.partition(),
        "offset": letter.offset(),
        "timestamp_ms": letter.timestamp()[1],
        "id": _text(h.find(record_headers, h.MESSAGE_ID)),
        "reason": _text(h.find(record_headers, h.DLQ_REASON)),
        "detail": _text(h.find(record_headers, h.DLQ_DETAIL)),
        "key": _text(letter.key()),
        "value": shown_value,
        "encoding": encoding,
        "headers": {k: _text(v) or "" for k, v in record_headers},
    }
