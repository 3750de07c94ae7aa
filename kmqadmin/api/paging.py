"""Page sizes: every list is paged, and a page is capped, so no request reads much."""

from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request

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
