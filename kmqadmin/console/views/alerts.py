"""The alerts pages: every rule with its state and what went wrong, a
rule's form, silencing, the defaults offered to a queue, and the history
of alerts started and ended."""

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from kmqadmin.console.decorators import admin, operator, viewer
from kmqadmin.console.forms.alerts import AlertRuleForm
from kmqadmin.console.models import AlertEvent, AlertRule, Queue
from kmqadmin.console.models.alerts import WINDOWED
from kmqadmin.console.services.alerts import changes
from kmqadmin.console.services.alerts.notifications import seen_by
from kmqadmin.console.services.alerts.rules import DEFAULTS_TEXT, MAX_SILENCE_MINUTES
from kmqadmin.console.services.roles import Role, role_of

PAGE = 50
SILENCES = [(15, "15 min"), (60, "1 h"), (240, "4 h"), (1440, "1 day"), (10080, "1 week")]
RULES = AlertRule.objects.with_targets()


@viewer
def index(request: HttpRequest) -> HttpResponse:
    role = role_of(request.user)
    rules = [(rule, _receivers(rule, role)) for rule in RULES.order_by("id")]
    bare = Queue.objects.filter(alert_rules__isnull=True).select_related("cluster")
    context = {
        "rules": rules,
        "queues_without_rules": bare.order_by("topic"),
        "silences": SILENCES,
        "can_silence": role >= Role.OPERATOR,
        "is_admin": role >= Role.ADMIN,
        "now": timezone.now(),
        "defaults": DEFAULTS_TEXT,
        "windowed": WINDOWED,
    }
    return render(request, "console/alerts.html", context)


@admin
def edit(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    rule = get_object_or_404(RULES, pk=pk) if pk is not None else AlertRule()
    form = AlertRuleForm(request.POST or None, instance=rule)
    if request.method == "POST" and form.is_valid():
        if pk is None:
            changes.add(request.user, form.instance)
        else:
            changes.change(request.user, get_object_or_404(RULES, pk=pk), form.changed_fields())
        messages.success(request, f"saved alert rule: {form.instance}")
        return redirect("console:alerts")
    status = 400 if request.method == "POST" else 200
    return render(request, "console/alert_form.html", {"form": form, "rule": rule}, status=status)


@admin
@require_POST
def delete(request: HttpRequest, pk: int) -> HttpResponse:
    rule = get_object_or_404(RULES, pk=pk)
    changes.delete(request.user, rule)
    messages.success(request, f"deleted alert rule: {rule}")
    return redirect("console:alerts")


@operator
@require_POST
def silence(request: HttpRequest, pk: int) -> HttpResponse:
    rule = get_object_or_404(RULES, pk=pk)
    try:
        minutes = int(request.POST.get("minutes", ""))
    except ValueError:
        minutes = -1
    if not 0 <= minutes <= MAX_SILENCE_MINUTES:
        messages.error(request, f"minutes: a whole number from 0 to {MAX_SILENCE_MINUTES}")
        return redirect("console:alerts")
    changes.silence(request.user, rule, minutes, timezone.now())
    messages.success(request, f"{'silenced' if minutes else 'unsilenced'}: {rule}")
    return redirect("console:alerts")


@admin
@require_POST
def defaults(request: HttpRequest, queue_pk: int) -> HttpResponse:
    queue = get_object_or_404(Queue, pk=queue_pk)
    added = changes.add_defaults(request.user, queue)
    messages.success(request, f"added {len(added)} default rule(s) to {queue.topic}")
    return redirect("console:alerts")


@viewer
def history(request: HttpRequest) -> HttpResponse:
    events = AlertEvent.objects.select_related("rule__queue", "rule__schedules")
    kind = request.GET.get("kind", "")
    if kind not in AlertEvent.Kind.values:
        kind = ""  # not echoed into the pager's links
    if kind:
        events = events.filter(kind=kind)
    page = Paginator(events, PAGE).get_page(request.GET.get("page"))
    context = {"page": page, "kind": kind, "kinds": AlertEvent.Kind.values}
    return render(request, "console/alert_history.html", context)


def _receivers(rule: AlertRule, role: Role) -> list[str]:
    """Who is told, as this person may see it: a webhook whole to admins only."""
    shown = []
    if rule.webhook_url:
        url = seen_by(rule.webhook_url, role)
        shown.append(f"{'Slack' if rule.slack else 'webhook'} {url}")
    shown += rule.recipients()
    return shown
