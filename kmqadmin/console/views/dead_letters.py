"""The DLQ browser: a filtered page from a seek, per-letter and bulk redrive."""

from confluent_kafka import Message as KafkaMessage
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from kmqadmin.console.decorators import operator, viewer
from kmqadmin.console.models import Queue
from kmqadmin.console.services.browsing.masking import masked_letter_filter, masking_for
from kmqadmin.console.services.browsing.raw_headers import raw_headers
from kmqadmin.console.services.browsing.schema_rendering import schema_rendering
from kmqadmin.console.services.clusters import clients
from kmqadmin.console.services.coordinates import MAX_OFFSET, MAX_PARTITION
from kmqadmin.console.services.jobs import redrive_letters, start
from kmqadmin.console.services.missing import Missing
from kmqadmin.console.services.queues.letter_filters import LetterFilterForm
from kmqadmin.console.services.queues.letters import page_fields, redrives
from kmqadmin.console.services.queues.letters import redrive as redrive_letter
from kmqadmin.console.services.roles import Role, role_of
from kmqadmin.console.views.flash import flash
from kmqadmin.console.views.queues import queue_or_404
from kmqadmin.console.views.tasks import started
from kmqadmin.kafka.inspect.payload_masking import MaskRules

PAGE = 25


@viewer
def browse(request: HttpRequest, topic: str) -> HttpResponse:
    queue = queue_or_404(request, topic)
    masking = masking_for(request.user, queue)
    letters = clients.dead_letters(queue.config())
    form = LetterFilterForm(request.GET)
    partitions = letters.partitions()
    page = None
    if form.is_valid():
        partition = form.cleaned_data["partition"] or 0
        if partition in partitions:
            match = masked_letter_filter(form.letter_filter(), masking)
            page = letters.page(partition, PAGE, start=form.cleaned_data["start"], match=match)
        else:
            form.add_error("partition", f"one of {partitions}")
    context = {
        "queue": queue,
        "form": form,
        "partitions": partitions,
        "letters": _shown(queue, page.letters, masking) if page else [],
        "next": page.next_offset if page else None,
        "query": request.GET.copy(),
        "can_act": role_of(request.user) >= Role.OPERATOR,
        "masked": masking is not None,  # no edits of masked letters
    }
    return render(request, "console/dead_letters.html", context)


def _shown(queue: Queue, letters: list[KafkaMessage], masking: MaskRules | None) -> list[dict]:
    """The page's letters, each with its payload decoded by schema (``schema``),
    masked by ``masking`` when given."""
    shown = page_fields(letters, masking)
    redriven = redrives(queue, letters)
    for fields, letter in zip(shown, letters, strict=True):
        value, key = letter.value(), letter.key()
        fields["schema"] = schema_rendering(queue.cluster, value, key, masking)
        fields["redriven"] = redriven.get((letter.partition(), letter.offset()))
    return shown


@viewer
def letter_headers(request: HttpRequest, topic: str, partition: int, offset: int) -> HttpResponse:
    """One undecodable letter's headers in hex, fetched when a person opens
    them: reading raw costs a client each, too much for every row of a page."""
    if partition > MAX_PARTITION or offset > MAX_OFFSET:
        return HttpResponse(f"{partition}/{offset} is past Kafka's bounds", status=400)
    queue = queue_or_404(request, topic)
    config = queue.config()
    raw = raw_headers(config, config.dlq_topic, partition, offset, masking_for(request.user, queue))
    return render(request, "console/_raw_headers.html", {"raw": raw})


@operator
@require_POST
def redrive(request: HttpRequest, topic: str, partition: int, offset: int) -> HttpResponse:
    if partition > MAX_PARTITION or offset > MAX_OFFSET:
        return flash(
            request, f"no letter at {partition}/{offset}: past Kafka's bounds", ok=False, status=400
        )
    queue = queue_or_404(request, topic)
    try:
        redrive_letter(request.user, queue, partition, offset)
    except Missing as exc:
        return flash(request, str(exc), ok=False, status=404)
    return flash(request, f"redriven: letter {partition}/{offset} is back on {topic}")


@operator
@require_POST
def bulk_redrive(request: HttpRequest, topic: str) -> HttpResponse:
    """Every letter matching the filter, as a job with a progress bar."""
    queue = queue_or_404(request, topic)
    form = LetterFilterForm(request.POST)
    if not form.is_valid():
        return flash(request, form.errors.as_text(), ok=False, status=400)
    partition = form.cleaned_data["partition"] or 0
    match = form.letter_filter().to_json()
    job = start(redrive_letters, request.user, queue.pk, partition, match, request.user.pk)
    return started(request, job)
