"""The REST API for the audit log: what the console's audit page shows,
filtered and paged in the database, newest first."""

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kmqadmin.api.paging import LIMIT, page_limit
from kmqadmin.api.serializers.audit import AuditFilterSerializer, AuditPageSerializer
from kmqadmin.console.models import AuditEntry

FILTERS = [
    OpenApiParameter(name, str, description=str(field.help_text))
    for name, field in AuditFilterSerializer().fields.items()
    if name != "after"
]


class AuditLog(APIView):
    @extend_schema(
        operation_id="audit_list",
        parameters=[*FILTERS, OpenApiParameter("after", int, description="cursor: an id"), LIMIT],
        responses=AuditPageSerializer,
    )
    def get(self, request: Request) -> Response:
        """Entries newest first; ``next`` is the cursor of the page after."""
        given = AuditFilterSerializer(data=request.query_params)
        given.is_valid(raise_exception=True)
        limit = page_limit(request)
        rows = list(_filtered(given.validated_data).order_by("-id")[:limit])
        cursor = rows[-1].id if len(rows) == limit else None
        return Response(AuditPageSerializer({"results": rows, "next": cursor}).data)


def _filtered(given: dict) -> QuerySet[AuditEntry]:
    entries = AuditEntry.objects.all()
    if "user" in given:
        entries = entries.filter(username=given["user"])  # kept when the user is deleted
    if "action" in given:
        entries = entries.filter(action=given["action"])
    if "target" in given:
        entries = entries.filter(target__contains=given["target"])
    if "since" in given:
        entries = entries.filter(at__gte=given["since"])
    if "until" in given:
        entries = entries.filter(at__lt=given["until"])
    if "after" in given:
        entries = entries.filter(id__lt=given["after"])
    return entries
