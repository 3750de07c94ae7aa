"""A queue's page (live in-flight table, or a share queue's group) and the
actions on its messages."""

from dataclasses import replace

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from kmqadmin.console import charts
from kmqadmin.console.decorators import admin, operator, viewer
from kmqadmin.console.forms.queue import ActionForm, ReplayForm
from kmqadmin.console.forms.reset import ResetForm
from kmqadmin.console.models import Queue
from kmqadmin.console.models.clusters import CLUSTER, cluster_query
from kmqadmin.console.services.alerts.rules import DEFAULTS_TEXT
from kmqadmin.console.services.audit import trail as audit
from kmqadmin.console.services.browsing.masking import masking_for
from kmqadmin.console.services.browsing.raw_headers import raw_headers
from kmqadmin.console.services.browsing.schema_rendering import schema_rendering
from kmqadmin.console.services.clusters import availability, clients, registered
from kmqadmin.console.services.clusters.availability import KafkaAway
from kmqadmin.console.services.conflict import Conflict
from kmqadmin.console.services.groups import share_groups
from kmqadmin.console.services.jobs import purge_queue, replay_range, start
from kmqadmin.console.services.missing import Missing
from kmqadmin.console.services.queues import messages as queue_messages
from kmqadmin.console.services.queues.share_limits import (
    NO_DEADLINES,
    NO_PURGE,
    NotForShareQueues,
    refuse_share,
)
from kmqadmin.console.services.roles import Role, role_of
from kmqadmin.console.views.flash import flash
from kmqadmin.console.views.tasks import started
from kmqadmin.kafka.admin.groups import GroupNotEmpty
from kmqadmin.kafka.admin.offset_reset import BadReset
from kmqadmin.kafka.client.errors import BrokerUnavailable


def queue_or_404(request: HttpRequest, topic: str) -> Queue:
    return registered.lookup(Queue, topic, request.GET.get(CLUSTER))


@viewer
def detail(request: HttpRequest, topic: str) -> HttpResponse:
    role = role_of(request.user)
    queue = queue_or_404(request, topic)
    context = {
        "queue": queue,
        "hours": charts.HOURS,
        "counts": charts.counts_chart([queue]),
        "latency": charts.latency_chart(queue),
        "replay": ReplayForm(),
        "can_act": role >= Role.OPERATOR,
        "is_admin": role >= Role.ADMIN,
        "missing_topics": _missing_topics(queue) if role >= Role.ADMIN else [],
        "alert_rules": queue.alert_rules.count(),
        "alert_defaults": DEFAULTS_TEXT,
    }
    if queue.backend == "share":
        context |= {"share": share_groups.view(queue), "share_reset": ResetForm()}
    return render(request, "console/queue.html", context)


def _missing_topics(queue: Queue) -> list[str]:
    """What "Create missing topics" would create; none offered while the
    cluster does not answer (the page's live parts say it is away)."""
    config = queue.config()
    try:
        availability.require(config.bootstrap_servers, config.kafka_config)
        return config.missing_topics()
    except (KafkaAway, BrokerUnavailable):
        return []


@operator
@require_POST
def act(request: HttpRequest, topic: str, action: str) -> HttpResponse:
    if action not in queue_messages.MESSAGE_ACTIONS:
        raise Http404(f"no action {action}")
    queue = queue_or_404(request, topic)
    form = ActionForm(request.POST)
    if not form.is_valid():
        return flash(request, form.errors.as_text(), ok=False, status=400)
    data = form.cleaned_data
    if action == "extend" and data["ms"] is None:
        return flash(request, "extend needs ms: how long from now", ok=False, status=400)
    options = {"ms": data["ms"]} if action == "extend" else {"reason": data["reason"]}
    try:
        queue_messages.act(
            request.user,
            queue,
            data["message_id"],
            action,
            data["partition"],
            data["offset"],
            **options,
        )
    except Missing as exc:
        return flash(request, str(exc), ok=False, status=404)
    except Conflict as exc:
        return flash(request, str(exc), ok=False, status=409)
    return flash(request, f"{action}: {data['message_id']}")


@viewer
def message(request: HttpRequest, topic: str, message_id: str) -> HttpResponse:
    """A message's payload, headers and lifecycle, through its kmq-id; its
    first copy masked for an audience the queue's rules mask."""
    queue = queue_or_404(request, topic)
    masking = masking_for(request.user, queue)
    story = clients.lifecycle(queue.config()).find(message_id)
    if story is None:
        raise Http404(f"no message {message_id} on {topic}")
    in_flight = (
        None if queue.backend == "share" else clients.in_flight(queue.config()).find(message_id)
    )
    first = story.first
    raw = None
    if story.first_headers is None:  # undecodable: read them again as bytes
        where = (first.topic(), first.partition(), first.offset())
        raw = raw_headers(queue.config(), *where, masking=masking)
    return render(
        request,
        "console/message.html",
        {
            "queue": queue,
            "story": story if masking is None else replace(story, first=masking.record(first)),
            "in_flight": in_flight,
            "raw": raw,
            "schema": schema_rendering(queue.cluster, first.value(), first.key(), masking),
            "no_deadlines": NO_DEADLINES,
            "can_act": role_of(request.user) >= Role.OPERATOR,
            "masked": masking is not None,
        },
    )


@admin
@require_POST
def create_topics(request: HttpRequest, topic: str) -> HttpResponse:
    """For a registered queue whose topics were deleted behind its back."""
    queue = queue_or_404(request, topic)
    with audit.action(request.user, "create topics", topic) as entry:
        created = queue.config().ensure_topics(queue.partitions)
        entry.after = {"created": created}
    messages.success(request, f"created: {', '.join(created) or 'nothing, all exist'}")
    return redirect(f"{reverse('console:queue', args=[topic])}?{cluster_query(queue)}")


@operator
@require_POST
def replay(request: HttpRequest, topic: str) -> HttpResponse:
    queue = queue_or_404(request, topic)
    form = ReplayForm(request.POST)
    if not form.is_valid():
        return flash(request, form.errors.as_text(), ok=False, status=400)
    job = start(replay_range, request.user, queue.pk, form.span(), request.user.pk)
    return started(request, job)


@admin
@require_POST
def reset_share_group(request: HttpRequest, topic: str) -> HttpResponse:
    """Moves an empty share group's start offset: 409 with why while
    consumers are connected (or the queue has no share group)."""
    queue = queue_or_404(request, topic)
    form = ResetForm(request.POST)
    if not form.is_valid():
        return flash(request, form.errors.as_text(), ok=False, status=400)
    try:
        result = share_groups.reset(request.user, queue, form.target())
    except (GroupNotEmpty, Conflict) as exc:
        return flash(request, str(exc), ok=False, status=409)
    except BadReset as exc:
        return flash(request, str(exc), ok=False, status=400)
    except share_groups.BROKER_ERRORS as exc:
        return flash(request, str(exc), ok=False, status=502)
    moved = ", ".join(f"{m.partition[1]}→{m.new}" for m in result.moves)
    refused = "; ".join(f"partition {p}: {e}" for (_, p), e in sorted(result.errors.items()))
    return flash(
        request,
        f"start offsets: {moved}" + (f"; refused: {refused}" if refused else ""),
        ok=not refused,
    )


@admin
@require_POST
def purge(request: HttpRequest, topic: str) -> HttpResponse:
    queue = queue_or_404(request, topic)
    try:
        refuse_share(queue, NO_PURGE)
    except NotForShareQueues as exc:
        return flash(request, str(exc), ok=False, status=409)
    job = start(purge_queue, request.user, queue.pk, request.user.pk)
    return started(request, job)
