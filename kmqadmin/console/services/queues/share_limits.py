"""What a share queue does not have, said in one place: the pages and the API
tell a person why, rather than showing an empty table or failing.

A share queue's deliveries are tracked by the broker (KIP-932): each record
acquired by a worker's share consumer is held under an acquisition lock that
only that consumer can acknowledge. There are no markers, so no per-message
deadline to show or extend, and nothing a console can ack, retry or reject.
"""

from kmqadmin.console.models import Queue
from kmqadmin.console.services.conflict import Conflict

NO_DEADLINES = (
    "share queues have no per-message deadlines: the broker holds each record's acquisition lock"
)
NO_MESSAGE_ACTIONS = (
    "a share queue's record is held by the worker's share consumer that acquired it, and only "
    "that consumer can accept, release or reject it; the console cannot act for it. A record "
    "that failed is in the DLQ, to redrive from there; to skip or replay records, an admin "
    "resets the share group's start offset"
)

NO_PURGE = (
    "a share queue is not purged by moving a consumer group: its share group keeps its own "
    "start offset; an admin resets it to latest (the group empty) to skip every record"
)


class NotForShareQueues(Conflict):
    """Asked of a share queue what only a kmq queue has (409, nothing done)."""


def refuse_share(queue: Queue, reason: str) -> None:
    """Raises NotForShareQueues with ``reason`` when ``queue`` is a share queue."""
    if queue.backend == "share":
        raise NotForShareQueues(f"{queue.topic}: {reason}")
