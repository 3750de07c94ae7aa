"""Changing alert rules, the same from the console and the API: each change
audited, the rule before and after it (its webhook by host, its secret as
set or not), under a target one rule keeps whatever is edited."""

from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.forms.models import model_to_dict
from django.utils import timezone

from kmqadmin.console.models import AlertEvent, AlertRule, Queue
from kmqadmin.console.services.alerts.notifications import shown_url
from kmqadmin.console.services.alerts.offered import offered
from kmqadmin.console.services.audit import trail as audit

# What a person sets on a rule; the rest is its checks' state.
EDITABLE = [
    "condition",
    "threshold",
    "window_minutes",
    "webhook_url",
    "webhook_secret",
    "slack",
    "emails",
    "enabled",
]
# A new condition starts unfired, its value not yet measured.
UNCHECKED = {"firing": False, "value": None, "checked_at": None, "check_error": ""}


def add(user: AbstractBaseUser, rule: AlertRule) -> AlertRule:
    """``rule``, unsaved, on its queue or schedules topic."""
    with audit.action(user, "alert rule add", _rules_on(rule)) as entry:
        rule.save()
        entry.after = shown(rule)
    return rule


def add_defaults(user: AbstractBaseUser, queue: Queue) -> list[AlertRule]:
    """The rules offered to ``queue`` it has none of yet (offered.py)."""
    rules = offered(queue)
    if rules:
        with audit.action(user, "alert rule add", _rules_on(rules[0])) as entry:
            for rule in rules:
                rule.save()
            entry.after = [shown(rule) for rule in rules]
    return rules


def change(user: AbstractBaseUser, rule: AlertRule, fields: dict[str, Any]) -> AlertRule:
    """Only ``fields`` are written, so a check's state written meanwhile is
    kept. A firing rule given a new condition ends its alert: the resolved
    event is recorded here and told by the next check (evaluation.py)."""
    before = shown(rule)
    new_condition = "condition" in fields and fields["condition"] != rule.condition
    with audit.action(user, "alert rule change", _target(rule), before) as entry:
        with transaction.atomic():
            current = AlertRule.objects.select_for_update().get(pk=rule.pk)
            if new_condition and current.firing:  # as the checks left it, not as read
                _resolved_by_edit(current)
            fields = fields | UNCHECKED if new_condition else fields
            for name, value in fields.items():
                setattr(rule, name, value)
            rule.save(update_fields=list(fields))
        entry.after = shown(rule)
    return rule


def _resolved_by_edit(rule: AlertRule) -> None:
    AlertEvent.objects.create(
        rule=rule,
        at=timezone.now(),
        kind=AlertEvent.Kind.RESOLVED,
        value=rule.value or 0,
        threshold=rule.threshold,
        told=AlertEvent.Told.PENDING,  # no telling began: the next check's
    )


def delete(user: AbstractBaseUser, rule: AlertRule) -> None:
    with audit.action(user, "alert rule delete", _target(rule), shown(rule)):
        rule.delete()


def silence(user: AbstractBaseUser, rule: AlertRule, minutes: int, now: datetime) -> None:
    """For ``minutes`` from ``now``; 0 ends a silence."""
    until = now + timedelta(minutes=minutes) if minutes else None
    before = _silenced(rule.silenced_until)
    with audit.action(user, "alert rule silence", _target(rule), before) as entry:
        AlertRule.objects.filter(pk=rule.pk).update(silenced_until=until)
        rule.silenced_until = until
        entry.after = _silenced(until)


def shown(rule: AlertRule) -> dict[str, Any]:
    fields = ["id", *(f for f in EDITABLE if f != "webhook_secret")]
    kept = model_to_dict(rule, fields=fields)
    kept["webhook_url"] = shown_url(rule.webhook_url) if rule.webhook_url else ""
    kept["webhook_secret"] = "set" if rule.webhook_secret else ""
    return kept


def _target(rule: AlertRule) -> str:
    return f"alert rule {rule.pk} on {rule.target_kind} {rule.target}"


def _rules_on(rule: AlertRule) -> str:
    return f"alert rules on {rule.target_kind} {rule.target}"


def _silenced(until: datetime | None) -> dict[str, str | None]:
    return {"silenced_until": until and until.isoformat()}
