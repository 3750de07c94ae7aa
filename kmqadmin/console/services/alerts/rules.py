"""The rules offered to a new queue, and the bounds of what a person sets
on a rule beside it (silences, emails). The bounds of a rule's own numbers and
which conditions a target can have are the model's (models/alerts.py)."""

MAX_SILENCE_MINUTES = 7 * 24 * 60
MAX_EMAILS = 20
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
