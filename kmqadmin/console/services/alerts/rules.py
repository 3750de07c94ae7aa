"""Which conditions a target can have, the bounds of a rule's numbers, and
the rules offered to a new queue. No model here: the model's own checks
(AlertRule.clean) use it."""

MAX_WINDOW_MINUTES = 1440
MAX_THRESHOLD = 2**31 - 1  # what every database holds in an integer column
MAX_SILENCE_MINUTES = 7 * 24 * 60
MAX_EMAILS = 20
# Conditions counted over the rule's window.
WINDOWED = {"dead_letters", "redeliveries", "lateness_p99"}
# Read from a queue's tracker or its in-flight view: a share queue has none.
TRACKER_ONLY = {"oldest_in_flight", "markers_lag", "idle_workers"}
# A schedules topic's: its scheduler group's lag and members, how late it fired.
SCHEDULES = {"group_lag", "idle_workers", "lateness_p99"}
# Offered to a new queue, told to nobody until a receiver is set (the
# console shows DEFAULTS_TEXT). (condition, threshold, window minutes)
DEFAULTS = [
    ("dead_letters", 0, 10),
    ("redeliveries", 100, 5),
    ("oldest_in_flight", 3600, 10),
    ("markers_lag", 10_000, 10),
    ("idle_workers", 0, 10),
]
DEFAULTS_TEXT = (
    "any dead letter in 10 minutes, 100 redeliveries a minute, a delivery in flight an hour, "
    "and on kmq queues a tracker 10,000 markers behind or a worker with no partition"
)


def refused(target_kind: str, backend: str | None, condition: str) -> str | None:
    """Why a queue (of ``backend``) or a schedules topic cannot have
    ``condition``; None when it can."""
    if target_kind == "schedules":
        if condition not in SCHEDULES:
            return f"a schedules topic's rule is one of: {', '.join(sorted(SCHEDULES))}"
        return None
    if condition == "lateness_p99":
        return "lateness_p99 is a schedules topic's: its schedulers fire late"
    if backend == "share" and condition in TRACKER_ONLY:
        return f"{condition} reads a kmq tracker; a share queue has none"
    return None
