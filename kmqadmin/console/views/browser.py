"""The message browser: any topic of a registered cluster, read from a seek
with filters (kafka/inspect/browse.py does the reading), and one record's
renderings."""

from dataclasses import replace
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from kmqadmin.kafka.client.errors import TopicMissing
from kmqadmin.kafka.inspect.browse import BadSeek, Match, TopicBrowser
from kmqadmin.kafka.inspect.payload_masking import MaskRules
from kmqadmin.kafka.inspect.record_filter import RecordFilter

from ..decorators import viewer
from ..forms.browse import browse_form
from ..models import Cluster
from ..services import clients
from ..services.coordinates import MAX_OFFSET, MAX_PARTITION, number
from ..services.masking import topic_masking
from ..services.record_actions import record_actions
from ..services.renderings import Source, renderings
from ..services.roles import role_of
from ..services.topic_kinds import kind_of, topic_kinds


def _browser(cluster: Cluster) -> TopicBrowser:
    return clients.topic_browser(cluster.name, cluster.bootstrap, cluster.kafka_config())


def _partitions(browser: TopicBrowser, topic: str) -> list[int]:
    try:
        return browser.partitions(topic)
    except TopicMissing:
        raise Http404(f"no topic {topic}") from None


@viewer
def clusters(request: HttpRequest) -> HttpResponse:
    """Where the browser starts: the one cluster's topics, or a choice."""
    registered = list(Cluster.objects.all())
    if len(registered) == 1:
        return redirect("console:topics", registered[0].name)
    return render(request, "console/topics.html", {"clusters": registered})


@viewer
def topics(request: HttpRequest, cluster: str) -> HttpResponse:
    """The cluster's topics (Kafka's internal ones, named __*, left out)."""
    found = get_object_or_404(Cluster, name=cluster)
    kinds = topic_kinds(found)
    names = [name for name in _browser(found).topics() if not name.startswith("__")]
    rows = [(name, kinds.get(name, "other")) for name in names]
    context = {"cluster": found, "rows": rows, "clusters": Cluster.objects.all()}
    return render(request, "console/topics.html", context)


@viewer
def browse(request: HttpRequest, cluster: str, topic: str) -> HttpResponse:
    """A page of records; a bad start or filter is a 400 saying why. On a
    topic its queue masks for this person, the filters see the records as
    masked too, so a filter cannot be used to guess what the mask hides."""
    found = get_object_or_404(Cluster, name=cluster)
    masking = topic_masking(role_of(request.user), found, topic)
    browser = _browser(found)
    partitions = _partitions(browser, topic)
    form = browse_form(request.GET.dict())
    context = {"cluster": found, "topic": topic, "partitions": partitions, "form": form}
    if not form.is_valid():
        return render(request, "console/browse.html", context, status=400)
    try:
        match = _match(form.record_filter(), masking)
        page = browser.page(topic, form.seek(partitions[0]), match, form.caps())
    except BadSeek as exc:
        form.add_error("partition", str(exc))
        return render(request, "console/browse.html", context, status=400)
    if masking is not None:
        page = replace(page, records=[masking.browsed(r) for r in page.records])
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
    browser = _browser(found)
    _partitions(browser, topic)
    try:
        record = browser.record(topic, *coordinates)
    except BadSeek as exc:
        return HttpResponse(str(exc), status=400)
    if record is None:
        raise Http404(f"no record at {topic}/{partition}/{offset}")
    masking = topic_masking(role_of(request.user), found, topic)
    shown = renderings(record, Source(kind_of(found, topic), found, masking))
    chosen = next((r for r in shown if r.name == request.GET.get("as")), shown[0])
    editable = record.headers is not None and masking is None  # no edits of masked data
    context = {
        "cluster": found,
        "record": record if masking is None else masking.browsed(record),
        "renderings": shown,
        "chosen": chosen,
        "actions": record_actions(request, found, record) if editable else [],
        "masked": masking is not None,
    }
    return render(request, "console/browsed_message.html", context)


def _match(given: RecordFilter, masking: MaskRules | None) -> Match:
    return given if masking is None or given.empty else masking.matching(given)


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
