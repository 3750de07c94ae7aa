"""The minute's check of every enabled rule (beat runs ``check_all``).

An alert is told when it starts and when it ends, never while it lasts: a
rule keeps the state the last check left (``firing``), and only a check
that changes it, by winning the conditional update, writes an event and
tells the receivers. Two checks running at once (a slow minute overlapping
the next) therefore tell each change once. A rule whose source did not
answer keeps its state; the reason is on the rule. A silenced rule's
changes are recorded and told to nobody."""

import logging
from datetime import datetime

from django.utils import timezone

from ...models import AlertEvent, AlertRule
from .measures import Unmeasurable, measure
from .notifications import tell

log = logging.getLogger(__name__)


def check_all(now: datetime | None = None) -> dict[str, int]:
    """Every enabled rule at ``now`` (the wall clock unless given)."""
    now = now or timezone.now()
    counts = {"checked": 0, "unmeasurable": 0, "fired": 0, "resolved": 0}
    rules = AlertRule.objects.filter(enabled=True).select_related(
        "queue__cluster", "schedules__cluster"
    )
    for rule in rules:
        counts[check(rule, now)] += 1
    return counts


def check(rule: AlertRule, now: datetime) -> str:
    """What the check found: unmeasurable, fired, resolved or (no change) checked."""
    same = AlertRule.objects.filter(pk=rule.pk)
    try:
        value = measure(rule, now)
    except Unmeasurable as exc:
        same.update(checked_at=now, check_error=str(exc))
        return "unmeasurable"
    same.update(value=value, checked_at=now, check_error="")
    breaching = value > rule.threshold
    if breaching == rule.firing or not same.filter(firing=rule.firing).update(firing=breaching):
        return "checked"
    kind = AlertEvent.Kind.FIRING if breaching else AlertEvent.Kind.RESOLVED
    event = AlertEvent(rule=rule, at=now, kind=kind, value=value, threshold=rule.threshold)
    _tell(rule, event, now)
    event.save()
    return "fired" if breaching else "resolved"


def _tell(rule: AlertRule, event: AlertEvent, now: datetime) -> None:
    if rule.silenced(now):
        event.told = AlertEvent.Told.SILENCED
        return
    if not (rule.webhook_url or rule.recipients()):
        event.told = AlertEvent.Told.NOBODY
        return
    told = tell(rule, event)
    event.attempts, event.error = told.attempts, told.error
    event.told = AlertEvent.Told.FAILED if told.error else AlertEvent.Told.SENT
    AlertRule.objects.filter(pk=rule.pk).update(delivery_error=told.error)
    if told.error:
        log.warning("alert %s on %s not told: %s", event.kind, rule.target, told.error)
