"""The minute's check of every enabled rule (beat runs ``check_all``).

An alert is told when it starts and when it ends, never while it lasts: a
rule keeps the state the last check left (``firing``), and only the check
that changes it, by winning a conditional update, records the change, in
the same transaction as its event (told ``pending``). Two checks running at
once (a slow minute overlapping the next) therefore tell each change once.
The event is told after the commit, so a receiver that hangs holds no lock;
one not told (it failed, the rule was silenced or had no receiver, the
worker died while telling it) is told at the next check that can while the
alert lasts. A rule whose source did not answer keeps its state, the reason
on the rule; any other failure of one rule is said on it, and the others
are checked."""

import logging
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from kmqadmin.console.models import AlertEvent, AlertRule
from kmqadmin.console.services.alerts.measures import Unmeasurable, measure
from kmqadmin.console.services.alerts.notifications import Delivery, tell

log = logging.getLogger(__name__)
Told = AlertEvent.Told
# An event still "pending" this long after its check was being told by a
# worker that died (a webhook's tries take under a minute).
TELLING_S = 120
OWED = (Told.PENDING, Told.FAILED, Told.SILENCED, Told.NOBODY)


def check_all(now: datetime | None = None) -> dict[str, int]:
    """Every enabled rule, each at ``now`` (its own wall clock unless given)."""
    counts = {"checked": 0, "unmeasurable": 0, "fired": 0, "resolved": 0, "failed": 0}
    for pk in AlertRule.objects.filter(enabled=True).values_list("pk", flat=True):
        counts[check(pk, now or timezone.now())] += 1
    return counts


def check(pk: int, now: datetime) -> str:
    """What the check of rule ``pk`` found: unmeasurable, fired, resolved,
    failed (said on the rule) or checked (no change)."""
    rule = AlertRule.objects.with_targets().filter(pk=pk, enabled=True).first()
    if rule is None:
        return "checked"  # deleted or disabled since the list was read
    try:
        return _check(rule, now)
    except Exception as exc:  # one rule's bug or bad data must not stop the others
        log.exception("alert rule %s could not be checked", pk)
        _newer(pk, now).update(checked_at=now, check_error=f"{type(exc).__name__}: {exc}")
        return "failed"


def _check(rule: AlertRule, now: datetime) -> str:
    try:
        value = measure(rule, now)
    except Unmeasurable as exc:
        _newer(rule.pk, now).update(checked_at=now, check_error=str(exc))
        return "unmeasurable"
    if not _newer(rule.pk, now).update(value=value, checked_at=now, check_error=""):
        return "checked"  # a later check has been here already
    breaching = value > rule.threshold
    event = _record_change(rule, breaching, value, now) if breaching != rule.firing else None
    if event is None:
        _tell_owed(rule, now)
        return "checked"
    _tell(rule, event, now)
    return "fired" if breaching else "resolved"


def _newer(pk: int, now: datetime) -> QuerySet[AlertRule]:
    """The rule, unless a check at a later time has already been."""
    return AlertRule.objects.filter(Q(checked_at__isnull=True) | Q(checked_at__lte=now), pk=pk)


def _record_change(
    rule: AlertRule, breaching: bool, value: float, now: datetime
) -> AlertEvent | None:
    kind = AlertEvent.Kind.FIRING if breaching else AlertEvent.Kind.RESOLVED
    with transaction.atomic():
        won = AlertRule.objects.filter(pk=rule.pk, firing=rule.firing).update(firing=breaching)
        if not won:
            return None  # another check recorded this change
        return AlertEvent.objects.create(
            rule=rule,
            at=now,
            kind=kind,
            value=value,
            threshold=rule.threshold,
            told=Told.PENDING,
            told_at=now,
        )


def _tell_owed(rule: AlertRule, now: datetime) -> None:
    """The current alert's event again, if it was not told and can be now:
    claimed first (a conditional update), so two checks tell it once. A
    resolved alert whose start was never told is not told either."""
    last = rule.events.order_by("-id").first()
    state = AlertEvent.Kind.FIRING if rule.firing else AlertEvent.Kind.RESOLVED
    if last is None or last.kind != state or last.told not in OWED:
        return
    stale = last.told_at is None or last.told_at <= now - timedelta(seconds=TELLING_S)
    if last.told == Told.PENDING and not stale:
        return  # being told now
    if last.told not in (Told.FAILED, Told.PENDING) and not _receivers(rule, now):
        return  # still nobody to tell
    if state == AlertEvent.Kind.RESOLVED and not _start_was_told(rule, last):
        return
    claimed = AlertEvent.objects.filter(pk=last.pk, told=last.told, attempts=last.attempts)
    if claimed.update(told=Told.PENDING, told_at=now):
        _tell(rule, last, now)


def _start_was_told(rule: AlertRule, resolved: AlertEvent) -> bool:
    start = rule.events.filter(kind=AlertEvent.Kind.FIRING, id__lt=resolved.id).order_by("-id")
    start = start.first()
    return start is not None and start.told == Told.SENT


def _receivers(rule: AlertRule, now: datetime) -> bool:
    return not rule.silenced(now) and bool(rule.webhook_url or rule.recipients())


def _tell(rule: AlertRule, event: AlertEvent, now: datetime) -> None:
    sent = {"webhook_sent": event.webhook_sent, "email_sent": event.email_sent}
    if rule.silenced(now):
        told, attempts, error = Told.SILENCED, event.attempts, ""
    elif not (rule.webhook_url or rule.recipients()):
        told, attempts, error = Told.NOBODY, event.attempts, ""
    else:
        try:
            result = tell(rule, event)
        except Exception as exc:  # a bug in telling: said on the event, the check still done
            log.exception("alert %s on %s could not be told", event.kind, rule.target)
            result = Delivery(
                0, f"{type(exc).__name__}: {exc}", event.webhook_sent, event.email_sent
            )
        attempts, error = event.attempts + result.attempts, result.error
        told = Told.FAILED if error else Told.SENT
        sent = {"webhook_sent": result.webhook_sent, "email_sent": result.email_sent}
        AlertRule.objects.filter(pk=rule.pk).update(delivery_error=error)
        if error:
            log.warning("alert %s on %s not told: %s", event.kind, rule.target, error)
    AlertEvent.objects.filter(pk=event.pk).update(told=told, attempts=attempts, error=error, **sent)
