"""Our 404 page: what was not found, and the page that fixes it.

A schedules topic or queue that is not registered yet is the usual way to
land here (a link from a runbook, a topic typed by hand); the page links to
its registration with the topic filled in.
"""

import re

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import Resolver404, reverse
from django.utils.http import urlencode

# The registrable kinds by the path of their pages: /schedules/<topic>/...
_REGISTRABLE = re.compile(r"^/(?P<kind>schedules|queues)/(?P<topic>[^/]+)/")
_KIND = {"schedules": ("schedules", "schedules topic"), "queues": ("queue", "queue")}


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    context = {"reason": _reason(exception), "register": _register(request.path)}
    return render(request, "404.html", context, status=404)


def _reason(exception: Exception) -> str:
    """Our own Http404s say what is missing; the URL resolver's say nothing
    a visitor can use."""
    if isinstance(exception, Http404) and not isinstance(exception, Resolver404):
        return str(exception)
    return "No page at this address."


def _register(path: str) -> tuple[str, str] | None:
    """(link, what) to register the topic the path names, if it names one."""
    found = _REGISTRABLE.match(path)
    if found is None:
        return None
    kind, what = _KIND[found["kind"]]
    link = reverse("console:register", args=[kind]) + "?" + urlencode({"topic": found["topic"]})
    return link, what
