"""The rules offered to a queue: rules.DEFAULTS it can have and has no rule
of yet, unsaved."""

from kmqadmin.console.models import AlertRule, Queue
from kmqadmin.console.models.alerts import refused
from kmqadmin.console.services.alerts.rules import DEFAULTS


def offered(queue: Queue) -> list[AlertRule]:
    have = set(queue.alert_rules.values_list("condition", flat=True))
    return [
        AlertRule(queue=queue, condition=condition, threshold=threshold, window_minutes=window)
        for condition, threshold, window in DEFAULTS
        if condition not in have and refused("queue", queue.backend, condition) is None
    ]
