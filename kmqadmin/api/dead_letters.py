"""The REST API for a queue's DLQ: browse with filters, redrive one letter."""

import base64

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.fields import DateTimeField
from rest_framework.request import Request
from rest_framework.response import Response

from kmqadmin.console import audit, clients
from kmqadmin.kmq import headers as h

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
            since_ms=_since(params.get("since")),
            match=_matcher(params),
        )
        return Response(
            {
                "partitions": partitions,
                "results": [_shown(letter) for letter in page.letters],
                "next": page.next_offset,
            }
        )


class Redrive(QueueAPIView):
    @extend_schema(request=None, responses=s.LetterSerializer)
    def post(self, request: Request, topic: str, partition: str, offset: str) -> Response:
        """Sends one letter back to the queue, delivery count reset."""
        letters = clients.dead_letters(self.queue(topic).config())
        known = int(partition) in letters.partitions()
        letter = letters.get(int(partition), int(offset)) if known else None
        if letter is None:
            raise NotFound(f"no letter at {partition}/{offset} of {topic}'s DLQ")
        letters.redrive(letter)
        shown = _shown(letter)
        audit.record(
            request.user,
            "redrive",
            shown["id"] or f"{topic}/dlq/{partition}/{offset}",
            before={"partition": int(partition), "offset": int(offset)},
            after={"topic": topic},
        )
        return Response(shown)


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


def _matcher(params):
    """One predicate from the filters given: all must hold."""
    key, reason, contains = params.get("key"), params.get("reason"), params.get("contains")
    header = params.get("header")
    name, value = None, None
    if header:
        name, sep, value = header.partition("=")
        if not sep or not name:
            raise ValidationError({"header": "expected NAME=VALUE"})
    wanted_key = key.encode() if key else None
    wanted_reason = reason.encode() if reason else None
    wanted_payload = contains.encode() if contains else None

    def match(record) -> bool:
        if wanted_key is not None and wanted_key not in (record.key() or b""):
            return False
        if wanted_payload is not None and wanted_payload not in (record.value() or b""):
            return False
        record_headers = record.headers()
        if wanted_reason is not None and h.find(record_headers, h.DLQ_REASON) != wanted_reason:
            return False
        return name is None or h.find(record_headers, name) == value.encode()

    return match


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
