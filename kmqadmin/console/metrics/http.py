"""Counts every HTTP request by method, route name and status.

First in MIDDLEWARE, so it also counts what a later middleware answers (a
413 from the body limit, a 400 for a bad host). The route is the URL
pattern's name, never the path: paths carry topics and message ids, which
would make a series per message.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponseBase
from prometheus_client import Counter

REQUESTS = Counter(
    "kmqadmin_http_requests",
    "HTTP requests answered, by method, route name and status",
    ["method", "route", "status"],
)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class CountRequests:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        match = request.resolver_match
        method = request.method if request.method in METHODS else "other"
        route = match.view_name if match is not None else "unmatched"
        REQUESTS.labels(method, route, str(response.status_code)).inc()
        return response
