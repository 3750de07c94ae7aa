"""The message browser: any topic of a registered cluster, read from a seek
with filters (kafka/inspect/browse.py does the reading), and one record's
renderings."""

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from kmqadmin.console.decorators import viewer
from kmqadmin.console.models import Cluster
from kmqadmin.console.services.browsing import reading as browsing
from kmqadmin.console.services.browsing.query import browse_form
from kmqadmin.console.services.browsing.record_actions import record_actions
from kmqadmin.console.services.coordinates import MAX_OFFSET, MAX_PARTITION, number
from kmqadmin.kafka.inspect.browse import BadSeek


@viewer
def clusters(request: HttpRequest) -> HttpResponse:
    """Where the browser starts: the one cluster's topics, or a choice."""
    registered = list(Cluster.objects.all())
    if len(registered) == 1:
        return redirect("console:topics", registered[0].name)
    return render(request, "console/topics.html", {"clusters": registered})


@viewer
def topics(request: HttpRequest, cluster: str) -> HttpResponse:
    """The cluster's topics (Kafka's internal ones left out)."""
    found = get_object_or_404(Cluster, name=cluster)
    rows = browsing.topics(found)
    context = {"cluster": found, "rows": rows, "clusters": Cluster.objects.all()}
    return render(request, "console/topics.html", context)


@viewer
def browse(request: HttpRequest, cluster: str, topic: str) -> HttpResponse:
    """A page of records as this person may see them (services/browsing/reading.py);
    a bad start or filter is a 400 saying why."""
    found = get_object_or_404(Cluster, name=cluster)
    partitions = browsing.partitions(found, topic)
    form = browse_form(request.GET.dict())
    context = {"cluster": found, "topic": topic, "partitions": partitions, "form": form}
    if not form.is_valid():
        return render(request, "console/browse.html", context, status=400)
    seek, given = form.seek(partitions[0]), form.record_filter()
    try:
        page = browsing.page(request.user, found, topic, seek, given, form.caps())
    except BadSeek as exc:
        form.add_error("partition", str(exc))
        return render(request, "console/browse.html", context, status=400)
    context |= {"page": page, "more": _more(request, page.next_offset), "tail": _tail(request)}
    return render(request, "console/browse.html", context)


@viewer
def message(
    request: HttpRequest, cluster: str, topic: str, partition: str, offset: str
) -> HttpResponse:
    """One record in every rendering that applies; ``?as=`` picks the one shown."""
    try:
        coordinates = number(partition, MAX_PARTITION), number(offset, MAX_OFFSET)
    except ValueError:
        return HttpResponse(f"{partition}/{offset} is past Kafka's bounds", status=400)
    found = get_object_or_404(Cluster, name=cluster)
    try:
        shown = browsing.record(request.user, found, topic, *coordinates)
    except BadSeek as exc:
        return HttpResponse(str(exc), status=400)
    chosen = next((r for r in shown.renderings if r.name == request.GET.get("as")), None)
    editable = shown.clear.headers is not None and not shown.masked  # no edits of masked data
    context = {
        "cluster": found,
        "record": shown.record,
        "renderings": shown.renderings,
        "chosen": chosen or shown.renderings[0],
        "actions": record_actions(request, found, shown.clear) if editable else [],
        "masked": shown.masked,
    }
    return render(request, "console/browsed_message.html", context)


def _more(request: HttpRequest, next_offset: int | None) -> str | None:
    """The query that goes on from ``next_offset``, same direction and filters."""
    if next_offset is None:
        return None
    query = request.GET.dict() | {"start": "offset", "offset": str(next_offset)}
    return urlencode(query)


def _tail(request: HttpRequest) -> str:
    """The filters, for the live tail's socket URL."""
    names = ("key", "header", "contains", "json_path")
    return urlencode({name: request.GET[name] for name in names if request.GET.get(name)})
