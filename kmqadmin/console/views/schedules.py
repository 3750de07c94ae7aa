"""Schedules: the schedules topics, a topic's upcoming list, create, edit, cancel, fire now."""

from confluent_kafka import Message as KafkaMessage
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from kmqadmin.console.decorators import operator, viewer
from kmqadmin.console.forms.schedule import ScheduleForm
from kmqadmin.console.models import ScheduleTopic
from kmqadmin.console.models.clusters import CLUSTER, cluster_query
from kmqadmin.console.services import cursors
from kmqadmin.console.services.clusters import clients, registered
from kmqadmin.console.services.missing import Missing
from kmqadmin.console.services.roles import Role, role_of
from kmqadmin.console.services.schedules import (
    TargetNotAllowed,
    cancel_schedule,
    fire_schedule,
    live_schedule,
    write_schedule,
)
from kmqadmin.console.views.flash import flash
from kmqadmin.scheduler import wire
from kmqadmin.scheduler.schedule_refs import ref_of

PAGE = 50


def topic_or_404(request: HttpRequest, topic: str) -> ScheduleTopic:
    return registered.lookup(ScheduleTopic, topic, request.GET.get(CLUSTER))


@viewer
def index(request: HttpRequest) -> HttpResponse:
    """The registered schedules topics: where the menu's Schedules leads."""
    context = {
        "topics": ScheduleTopic.objects.select_related("cluster"),
        "is_admin": role_of(request.user) >= Role.ADMIN,
    }
    return render(request, "console/schedule_topics.html", context)


@viewer
def upcoming(request: HttpRequest, topic: str) -> HttpResponse:
    """Soonest first, paged by a (due, id) cursor."""
    schedules = topic_or_404(request, topic)
    view = clients.upcoming(schedules.config())
    try:
        after = cursors.schedule_after(request.GET.get("after"))
    except cursors.BadCursor:
        after = None  # a hand-edited link: the first page
    page = view.page(PAGE, after)
    cursor = cursors.schedule_cursor(page[-1]) if len(page) == PAGE else None
    context = {
        "topic": schedules,
        "page": page,
        "count": view.count(),
        "forbidden": view.forbidden(),
        "unfireable": view.unfireable(),
        "complete": view.complete,
        "next": cursor,
        "form": ScheduleForm(initial={"target_topic": ""}),
    }
    return render(request, "console/schedules.html", context)


@operator
def edit(request: HttpRequest, topic: str, schedule_id: str | None = None) -> HttpResponse:
    """GET: the form (filled in from the live version for an existing id);
    POST: a new version. An edit keeps what the form does not show: the
    headers that pass through, and a payload that is not text."""
    schedules = topic_or_404(request, topic)
    old = _live_record(schedules, schedule_id) if schedule_id is not None else None
    form = ScheduleForm(request.POST or None, initial=ScheduleForm.initial_from(old))
    if old is not None:
        form.fields["id"].disabled = True  # a new id is a new schedule, not an edit
    keeps_payload = old is not None and "value" not in form.initial
    if request.method == "POST" and form.is_valid():
        data = form.schedule()
        if old is not None:
            data["headers"] = dict(wire.passed(wire.headers_of(old)))
        if keeps_payload:
            data["payload"] = old.value()
        key = old.key() if old is not None else form.cleaned_data["id"].encode()
        try:
            write_schedule(request.user, schedules, key, data, edit=old is not None)
        except Missing as exc:
            form.add_error(None, str(exc))
        except TargetNotAllowed as exc:
            form.add_error("target_topic", str(exc))
        else:
            messages.success(request, f"scheduled {ref_of(key)}")
            listed = reverse("console:schedules", args=[topic])
            return redirect(f"{listed}?{cluster_query(schedules)}")
    context = {
        "topic": schedules,
        "form": form,
        "schedule_id": schedule_id,
        "keeps_payload": keeps_payload,
    }
    status = 400 if request.method == "POST" else 200
    return render(request, "console/schedule_form.html", context, status=status)


def _live_record(schedules: ScheduleTopic, schedule_id: str) -> KafkaMessage:
    try:
        live = live_schedule(schedules, schedule_id)
    except Missing as exc:
        raise Http404(str(exc)) from None
    record = clients.upcoming(schedules.config()).record(live)
    if record is None:
        raise Http404(f"schedule {schedule_id}'s record is gone (compacted)")
    return record


# What each one-click schedule action does, and what the page says after it.
SCHEDULE_ACTIONS = {
    "cancel": (cancel_schedule, "cancelled {}"),
    "fire": (fire_schedule, "{} fires now"),
}


@operator
@require_POST
def act(request: HttpRequest, topic: str, schedule_id: str, action: str) -> HttpResponse:
    do, done = SCHEDULE_ACTIONS[action]
    try:
        do(request.user, topic_or_404(request, topic), schedule_id)
    except Missing as exc:
        return flash(request, str(exc), ok=False, status=404)
    except TargetNotAllowed as exc:
        return flash(request, str(exc), ok=False, status=400)
    return flash(request, done.format(schedule_id))
