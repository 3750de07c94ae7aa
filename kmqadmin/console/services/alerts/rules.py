"""Which conditions a target can have, the bounds of a rule's numbers, and
the rules offered when a queue is registered."""

from ...models import AlertRule, Queue, ScheduleTopic

Condition = AlertRule.Condition
MAX_WINDOW_MINUTES = 1440
MAX_THRESHOLD = 2**31 - 1  # what every database holds in an integer column
MAX_SILENCE_MINUTES = 7 * 24 * 60
# Read from a queue's tracker or its in-flight view: a share queue has none.
TRACKER_ONLY = {Condition.OLDEST_IN_FLIGHT, Condition.MARKERS_LAG, Condition.IDLE_WORKERS}
# A schedules topic's: its scheduler group's lag and members.
SCHEDULES = {Condition.GROUP_LAG, Condition.IDLE_WORKERS}


def refused(target: Queue | ScheduleTopic, condition: str) -> str | None:
    """Why ``target`` cannot have ``condition``; None when it can."""
    if isinstance(target, ScheduleTopic):
        if condition not in SCHEDULES:
            allowed = ", ".join(sorted(SCHEDULES))
            return f"a schedules topic's rule is one of: {allowed}"
        return None
    if target.backend == "share" and condition in TRACKER_ONLY:
        return f"{condition} reads a kmq tracker; a share queue has none"
    return None


def defaults(queue: Queue) -> list[AlertRule]:
    """Offered when a queue is registered (unsaved, told to nobody until a
    receiver is set): any dead letter in 10 minutes, a delivery in flight
    an hour, 100 redeliveries a minute, and on kmq queues a tracker 10,000
    markers behind or a worker with no partition."""
    offered = [
        AlertRule(queue=queue, condition=Condition.DEAD_LETTERS, threshold=0, window_minutes=10),
        AlertRule(queue=queue, condition=Condition.REDELIVERIES, threshold=100, window_minutes=5),
        AlertRule(queue=queue, condition=Condition.OLDEST_IN_FLIGHT, threshold=3600),
        AlertRule(queue=queue, condition=Condition.MARKERS_LAG, threshold=10_000),
        AlertRule(queue=queue, condition=Condition.IDLE_WORKERS, threshold=0),
    ]
    return [rule for rule in offered if refused(queue, rule.condition) is None]
