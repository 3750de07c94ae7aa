"""Producing by hand: a new message to a queue, a message reproduced with
edits, a DLQ letter redriven with edits. One form (forms/produce.py) for all
three; operators only."""

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import render

from kmqadmin.console.decorators import operator
from kmqadmin.console.forms.produce import ProduceForm, header_rows_shown
from kmqadmin.console.models import Queue
from kmqadmin.console.services.browsing.masking import NO_MASKED_EDITS, masking_for
from kmqadmin.console.services.clusters import clients
from kmqadmin.console.services.conflict import Conflict
from kmqadmin.console.services.coordinates import MAX_OFFSET, MAX_PARTITION
from kmqadmin.console.services.missing import Missing
from kmqadmin.console.services.queues import letters
from kmqadmin.console.services.queues import messages as queue_messages
from kmqadmin.console.views.queues import queue_or_404
from kmqadmin.kmq.draft import Draft, NotEditable, TooLarge, as_text, of_record
from kmqadmin.kmq.given_headers import BadInput
from kmqadmin.kmq.headers import parse_message_id

# The query parameter naming the kmq-id a reproduce starts from.
FROM = "from"


@operator
def produce(request: HttpRequest, topic: str) -> HttpResponse:
    """A new message to the queue; ``?from=<kmq-id>``: pre-filled from that
    message (kmq's own headers left out: a new message gets its own)."""
    queue = queue_or_404(request, topic)
    source = request.GET.get(FROM) or None
    if source is not None and masking_for(request.user, queue) is not None:
        return HttpResponseForbidden(NO_MASKED_EDITS)
    context = {"queue": queue, "source": source}
    if request.method != "POST":
        try:
            start = Draft(b"") if source is None else _message_draft(queue, source)
        except Conflict as exc:
            return HttpResponse(str(exc), status=409)
        return _page(request, context, ProduceForm(initial=as_text(start)), as_text(start))
    form = ProduceForm(request.POST)
    try:
        _check_source(queue, source)
        message = _submitted(form, request)
        written = queue_messages.enqueue(request.user, queue, message, reproduces=source)
    except BadInput as exc:
        return _refused(request, context, form, exc)
    return _page(request, context | {"written": written}, form, _posted_headers(request))


@operator
def redrive_with_edits(
    request: HttpRequest, topic: str, partition: int, offset: int
) -> HttpResponse:
    """A letter's redrive, pre-filled with the letter: submitted, the edited
    message goes back as a plain redrive sends it (services.queues.letters). Refused
    (403) to an audience the queue masks, as is a reproduce: pre-filled with
    masked values, the edit would write the mask."""
    if partition > MAX_PARTITION or offset > MAX_OFFSET:
        raise Http404(f"no letter at {partition}/{offset}: past Kafka's bounds")
    queue = queue_or_404(request, topic)
    if masking_for(request.user, queue) is not None:
        return HttpResponseForbidden(NO_MASKED_EDITS)
    try:
        found = letters.letter(queue, partition, offset)
    except Missing as exc:
        raise Http404(str(exc)) from None
    context = {"queue": queue, "letter": found}
    if request.method != "POST":
        try:
            start = as_text(letters.editable(found))
        except Conflict as exc:
            return HttpResponse(str(exc), status=409)
        return _page(request, context, ProduceForm(initial=start), start)
    form = ProduceForm(request.POST)
    try:
        edited = _submitted(form, request)
        edits = {"key": edited.key, "value": edited.value, "headers": edited.headers}
        message_id = letters.redrive_with_edits(request.user, queue, found, edits)
    except Conflict as exc:
        return HttpResponse(str(exc), status=409)
    except BadInput as exc:
        return _refused(request, context, form, exc)
    return _page(request, context | {"redriven": message_id}, form, _posted_headers(request))


def _message_draft(queue: Queue, message_id: str) -> Draft:
    story = clients.lifecycle(queue.config()).find(message_id)
    if story is None:
        raise Http404(f"no message {message_id} on {queue.topic}")
    if story.first_headers is None:
        raise Conflict(f"{message_id}: its headers cannot be read, so it cannot be reproduced")
    first = story.first
    try:
        return of_record(first.key(), first.value(), story.first_headers)
    except NotEditable as exc:
        raise Conflict(f"{message_id}: {exc}, so it cannot be reproduced") from None


def _check_source(queue: Queue, source: str | None) -> None:
    """A reproduce's audit entry names its message: a kmq-id of this queue."""
    parsed = None if source is None else parse_message_id(source)
    if source is not None and (parsed is None or parsed[0] != queue.topic):
        raise BadInput(f"{source!r} is not a kmq-id of {queue.topic}")


def _submitted(form: ProduceForm, request: HttpRequest) -> Draft:
    if not form.is_valid():
        raise BadInput(form.errors.as_text())
    return form.draft(request.POST)


def _refused(request: HttpRequest, context: dict, form: ProduceForm, exc: BadInput) -> HttpResponse:
    """The form again as it was sent, with why nothing was written."""
    status = 413 if isinstance(exc, TooLarge) else 400
    shown = _posted_headers(request)
    return _page(request, context | {"error": str(exc)}, form, shown, status)


def _posted_headers(request: HttpRequest) -> dict:
    names, values = request.POST.getlist("header_name"), request.POST.getlist("header_value")
    return {"headers": {n: v for n, v in zip(names, values, strict=False) if n or v}}


def _page(
    request: HttpRequest, context: dict, form: ProduceForm, shown: dict, status: int = 200
) -> HttpResponse:
    rows = header_rows_shown(shown["headers"])
    return render(
        request, "console/produce.html", context | {"form": form, "rows": rows}, status=status
    )
