"""Paging: every list is paged, and a page is capped, so no request reads much.
Cursors are console/services/cursors.py's, so a page's ``next`` is always a
valid ``after`` in the console and the API alike."""

from collections.abc import Callable, Mapping

from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request

from kmqadmin.console.services.coordinates import number
from kmqadmin.console.services.cursors import BadCursor

MAX_PAGE = 200
LIMIT = OpenApiParameter("limit", int, description=f"page size, 1 to {MAX_PAGE} (50)")


def page_limit(request: Request) -> int:
    return bounded_int(request.query_params, "limit", 50, 1, MAX_PAGE)


def bounded_int[D: (int, None)](
    params: Mapping[str, str], name: str, default: D, low: int, high: int
) -> int | D:
    """Query parameter ``name``, a whole number from ``low`` to ``high``
    (``default`` when absent); a 400 naming the parameter if it is not."""
    text = params.get(name)
    if text in (None, ""):
        return default
    try:
        value = number(text, high)
    except ValueError:
        value = low - 1
    if value < low:
        raise ValidationError({name: f"expected a whole number from {low} to {high}"})
    return value


def page_after[K](request: Request, parse: Callable[[str | None], K | None]) -> K | None:
    """The ``after`` cursor, parsed; a 400 saying what a cursor looks like."""
    try:
        return parse(request.query_params.get("after"))
    except BadCursor as exc:
        raise ValidationError({"after": str(exc)}) from None
