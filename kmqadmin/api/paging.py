"""Paging: every list is paged, and a page is capped, so no request reads much.
Cursors are console/services/cursors.py's, so a page's ``next`` is always a
valid ``after`` in the console and the API alike."""

from collections.abc import Callable

from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request

from kmqadmin.console.services.cursors import BadCursor

MAX_PAGE = 200
LIMIT = OpenApiParameter("limit", int, description=f"page size, 1 to {MAX_PAGE} (50)")


def page_limit(request: Request) -> int:
    try:
        limit = int(request.query_params.get("limit", 50))
    except ValueError:
        raise ValidationError({"limit": "not a number"}) from None
    if not 1 <= limit <= MAX_PAGE:
        raise ValidationError({"limit": f"between 1 and {MAX_PAGE}"})
    return limit


def page_after[K](request: Request, parse: Callable[[str | None], K | None]) -> K | None:
    """The ``after`` cursor, parsed; a 400 saying what a cursor looks like."""
    try:
        return parse(request.query_params.get("after"))
    except BadCursor as exc:
        raise ValidationError({"after": str(exc)}) from None
