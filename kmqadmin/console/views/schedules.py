"""Schedules: the upcoming list of a schedules topic, create, edit, cancel, fire now."""

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .. import actions, clients
from ..decorators import operator, viewer
from ..forms import ScheduleForm
from ..models import ScheduleTopic
from .flash import flash

PAGE = 50


def topic_or_404(topic: str) -> ScheduleTopic:
    return get_object_or_404(ScheduleTopic.objects.select_related("cluster"), topic=topic)


@viewer
def upcoming(request: HttpRequest, topic: str) -> HttpResponse:
    """Soonest first, paged by a (due, id) cursor."""
    schedules = topic_or_404(topic)
    view = clients.upcoming(schedules.config())
    after = _cursor(request.GET.get("after", ""))
    page = view.page(PAGE, after)
    cursor = f"{page[-1].due_ms}:{page[-1].id}" if len(page) == PAGE else None
    context = {
        "topic": schedules,
        "page": page,
        "count": view.count(),
        "complete": view.complete,
        "next": cursor,
        "form": ScheduleForm(initial={"target_topic": ""}),
    }
    return render(request, "console/schedules.html", context)


@operator
def edit(request: HttpRequest, topic: str, schedule_id: str | None = None) -> HttpResponse:
    """GET: the form (filled in for an existing id); POST: a new version."""
    schedules = topic_or_404(topic)
    if request.method == "POST":
        form = ScheduleForm(request.POST)
        if form.is_valid():
            new_id = form.cleaned_data["id"]
            try:
                actions.write_schedule(
                    request.user,
                    schedules,
                    new_id,
                    form.schedule(),
                    edit=schedule_id is not None,
                )
            except actions.Missing as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, f"scheduled {new_id}")
                return redirect("console:schedules", topic=topic)
        status = 400
    else:
        form = ScheduleForm()
        if schedule_id is not None:
            try:
                live = actions.live_schedule(schedules, schedule_id)
            except actions.Missing as exc:
                raise Http404(str(exc)) from None
            form = ScheduleForm.for_edit(live.id, live.due_ms, live.target_topic)
        status = 200
    context = {"topic": schedules, "form": form, "schedule_id": schedule_id}
    return render(request, "console/schedule_form.html", context, status=status)


# What each one-click schedule action does, and what the page says after it.
SCHEDULE_ACTIONS = {
    "cancel": (actions.cancel_schedule, "cancelled {}"),
    "fire": (actions.fire_schedule, "{} fires now"),
}


@operator
@require_POST
def act(request: HttpRequest, topic: str, schedule_id: str, action: str) -> HttpResponse:
    do, done = SCHEDULE_ACTIONS[action]
    try:
        do(request.user, topic_or_404(topic), schedule_id)
    except actions.Missing as exc:
        return flash(request, str(exc), ok=False, status=404)
    return flash(request, done.format(schedule_id))


def _cursor(text: str) -> tuple[int, str] | None:
    due, sep, schedule_id = text.partition(":")
    return (int(due), schedule_id) if sep and due.isdigit() else None
