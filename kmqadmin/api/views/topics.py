"""The REST API for any topic of a registered cluster: its topics, a page
of records from a seek with filters, one record in its renderings. Read as
the console's browser reads (console/services/browsing/reading.py): masked for a
masked audience, filtered over what it may see, decoded by the cluster's
schema registry, and every read capped."""

from dataclasses import asdict

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kmqadmin.api.serializers.records import (
    RecordDetailSerializer,
    RecordPageSerializer,
    TopicSerializer,
)
from kmqadmin.console.models import Cluster
from kmqadmin.console.services.browsing import reading as browsing
from kmqadmin.console.services.browsing.query import MAX_RECORDS, BrowseForm, browse_form
from kmqadmin.console.services.coordinates import MAX_OFFSET, MAX_PARTITION, number
from kmqadmin.kafka.inspect.browse import BadSeek, BrowsedRecord
from kmqadmin.kmq.draft import text_or_base64

# The browser's filters, for the records page and the live tail (tail.py).
FILTERS = [
    OpenApiParameter("key", str, description="key contains"),
    OpenApiParameter("header", str, description="NAME, or NAME=VALUE: a header has it"),
    OpenApiParameter("contains", str, description="payload contains (UTF-8)"),
    OpenApiParameter("json_path", str, description="a JSONPath the JSON payload matches"),
]
SEEK = [
    OpenApiParameter("partition", int, description="the partition read (the first)"),
    OpenApiParameter(
        "start",
        str,
        enum=["newest", "oldest", "offset", "time"],
        description="where the page starts (no parameter at all: the newest, backward)",
    ),
    OpenApiParameter("offset", int, description="start=offset: this offset"),
    OpenApiParameter("at", str, description="start=time: the first record at or after, ISO 8601"),
    OpenApiParameter(
        "direction",
        str,
        enum=["forward", "backward"],
        description="backward: the records before the start, newest first",
    ),
    OpenApiParameter("limit", int, description=f"records, 1 to {MAX_RECORDS}"),
    *FILTERS,
]


class TopicList(APIView):
    @extend_schema(operation_id="clusters_topics", responses=TopicSerializer(many=True))
    def get(self, request: Request, cluster: str) -> Response:
        """The cluster's topics, Kafka's internal ones left out."""
        found = get_object_or_404(Cluster, name=cluster)
        rows = [{"name": name, "kind": kind} for name, kind in browsing.topics(found)]
        return Response(TopicSerializer(rows, many=True).data)


class RecordPage(APIView):
    @extend_schema(
        operation_id="clusters_topic_records", parameters=SEEK, responses=RecordPageSerializer
    )
    def get(self, request: Request, cluster: str, topic: str) -> Response:
        """A page of one partition's records that match the filters, from a
        seek, capped in records, records scanned and seconds; a cap that
        ended it says so, and next_offset goes on."""
        found = get_object_or_404(Cluster, name=cluster)
        partitions = browsing.partitions(found, topic)
        form = browse_form(request.query_params.dict())
        if not form.is_valid():
            raise ValidationError(_errors(form))
        seek, given = form.seek(partitions[0]), form.record_filter()
        try:
            page = browsing.page(request.user, found, topic, seek, given, form.caps())
        except BadSeek as exc:
            raise ValidationError({"partition": [str(exc)]}) from None
        body = asdict(page) | {"partitions": partitions, "records": record_fields(page.records)}
        return Response(RecordPageSerializer(body).data)


class RecordDetail(APIView):
    @extend_schema(operation_id="clusters_topic_record", responses=RecordDetailSerializer)
    def get(
        self, request: Request, cluster: str, topic: str, partition: str, offset: str
    ) -> Response:
        """One record in every rendering that applies (schema, JSON, text, hex);
        404 when there is none at that offset."""
        try:
            coordinates = number(partition, MAX_PARTITION), number(offset, MAX_OFFSET)
        except ValueError as exc:
            raise ValidationError({"offset": [str(exc)]}) from None
        found = get_object_or_404(Cluster, name=cluster)
        try:
            shown = browsing.record(request.user, found, topic, *coordinates)
        except BadSeek as exc:
            raise ValidationError({"partition": [str(exc)]}) from None
        body = {
            "record": _record(shown.record),
            "renderings": [asdict(r) for r in shown.renderings],
            "masked": shown.masked,
        }
        return Response(RecordDetailSerializer(body).data)


def _errors(form: BrowseForm) -> dict[str, list[str]]:
    return {field: [str(m) for m in messages] for field, messages in form.errors.items()}


def record_fields(records: list[BrowsedRecord]) -> list[dict]:
    """Records in the answers' shape (RecordPageSerializer's), for the live tail too."""
    return [_record(r) for r in records]


def _record(record: BrowsedRecord) -> dict:
    key, key_encoding = text_or_base64(record.key)
    value, value_encoding = text_or_base64(record.value)
    headers = None
    if record.headers is not None:
        headers = [
            dict(zip(("name", "value", "encoding"), (name, *text_or_base64(data)), strict=True))
            for name, data in record.headers
        ]
    return {
        "topic": record.topic,
        "partition": record.partition,
        "offset": record.offset,
        "timestamp_ms": record.timestamp_ms,
        "key": key,
        "key_encoding": key_encoding,
        "value": value,
        "value_encoding": value_encoding,
        "headers": headers,
    }
