"""API versions: the API is /api/v1/; the paths it had before versioning
(/api/...) answer the same for one more release, each answer saying it is
deprecated (RFC 9745's Deprecation header, with a Link to the /api/v1/
path that replaces it), so a service sees it in its logs before the
aliases go. The OpenAPI schema lists /api/v1/ alone."""

import functools
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver

CURRENT = "/api/v1/"
UNVERSIONED = "/api/"
# When the unversioned paths were deprecated: the release that added /api/v1/.
DEPRECATED_AT = 1_795_910_400  # 2026-11-29T00:00:00Z, as RFC 9745's @<epoch seconds>


def unversioned(patterns: list[URLPattern | URLResolver]) -> list[URLPattern]:
    """``patterns`` again, each view answering with the Deprecation header."""
    return [
        URLPattern(p.pattern, _deprecated(p.callback), p.default_args, p.name)
        for p in patterns
        if isinstance(p, URLPattern)
    ]


def current_only(endpoints: list[tuple[str, Any, str, Any]]) -> list[tuple[str, Any, str, Any]]:
    """drf-spectacular's preprocessing hook: the schema documents /api/v1/."""
    return [endpoint for endpoint in endpoints if endpoint[0].startswith(CURRENT)]


def _deprecated(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @functools.wraps(view)
    def answer(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        successor = CURRENT + request.path.removeprefix(UNVERSIONED)
        response["Deprecation"] = f"@{DEPRECATED_AT}"
        response["Link"] = f'<{successor}>; rel="successor-version"'
        return response

    return answer
