"""A queue's gauges, as the dashboard and the API's stats show them."""

from dataclasses import asdict, dataclass
from datetime import timedelta

from django.db.models import Sum
from django.utils import timezone

from kmqadmin.console.models import Queue, QueueMinute
from kmqadmin.console.services.clusters import clients
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kmq.share.counts import MINUTE_MS

RATE_MINUTES = 5


@dataclass(frozen=True)
class QueueStats:
    depth: int  # not yet taken by the workers
    in_flight: int | None  # None: a share queue (the broker's share group holds them)
    oldest_in_flight_ms: int | None  # age of the oldest open delivery
    dead_letters: int
    redelivered_per_min: float  # over the last RATE_MINUTES, as the trackers counted
    dead_lettered_per_min: float
    # Share queues only (None on kmq), from the counts their clients publish:
    # what the clients held at their latest per-minute reports, and the
    # acknowledgements refused by the broker or found past their lock.
    share_held: int | None = None
    refused_acks_per_min: float | None = None
    expired_locks_per_min: float | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def queue_stats(queue: Queue) -> QueueStats:
    """Offsets and the in-flight view only: no records read, so the
    dashboard can ask every few seconds."""
    config = queue.config()
    gauges = clients.gauges(config)
    if queue.backend == "share":
        return QueueStats(
            depth=share_depth(queue),
            **_NO_IN_FLIGHT_VIEW,
            dead_letters=gauges.dead_letters(),
            **_share_rates(queue),
        )
    return QueueStats(
        depth=gauges.depth(),
        **in_flight(queue),
        dead_letters=gauges.dead_letters(),
        **rates(queue),
    )


# A share queue has no markers to count open deliveries from.
_NO_IN_FLIGHT_VIEW = {"in_flight": None, "oldest_in_flight_ms": None}


def share_depth(queue: Queue) -> int:
    """Records the share group has not finished: those from its start
    offset on, less the ones it finished past it. The broker's own lag is
    in offsets (a transaction's marker and aborted records count), so only
    what it says of the finished ones is taken, where it says it (a broker
    before 4.2 does not, and the answer is an upper bound)."""
    config = queue.config()
    progress = clients.share_group_admin(config).progress(config.group_id, config.topic)
    starts = {p.partition: p.start_offset for p in progress if p.start_offset is not None}
    finished = sum(
        max(0, p.end - max(p.start_offset, p.log_start) - p.lag)
        for p in progress
        if p.start_offset is not None and p.lag is not None and p.lag_exact
    )
    return max(0, clients.gauges(config).waiting_from(starts) - finished)


def _share_rates(queue: Queue) -> dict[str, float | int]:
    """From the counts the clients publish: no tracker counts a share queue's
    redeliveries (releases and delayed retries) or moves to the DLQ."""
    config = queue.config()
    # The RATE_MINUTES whole minutes and this one so far, as rates() counts.
    window = clients.share_counts(config).last(RATE_MINUTES + 1, now=now_ms() + MINUTE_MS)
    minutes = window.minutes

    def per_min(count: int) -> float:
        return round(count / RATE_MINUTES, 1)

    return {
        "redelivered_per_min": per_min(sum(c.released + c.delayed for c in minutes)),
        "dead_lettered_per_min": per_min(sum(c.dead_lettered for c in minutes)),
        "share_held": window.in_flight(),
        "refused_acks_per_min": per_min(sum(c.refused for c in minutes)),
        "expired_locks_per_min": per_min(sum(c.expired for c in minutes)),
    }


def in_flight(queue: Queue) -> dict[str, int | None]:
    """Open deliveries and the oldest's age, from the in-flight view (a
    kmq queue's; alerts read it too)."""
    config = queue.config()
    view = clients.in_flight(config)
    oldest = view.oldest_deadline()
    started = None if oldest is None else oldest - config.message_timeout_ms
    return {
        "in_flight": view.count(),
        "oldest_in_flight_ms": None if started is None else max(0, now_ms() - started),
    }


def rates(queue: Queue) -> dict[str, float]:
    """Per minute over the last RATE_MINUTES whole minutes and this one so far."""
    since = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=RATE_MINUTES)
    sums = QueueMinute.objects.filter(queue=queue, minute__gte=since).aggregate(
        redelivered=Sum("redelivered", default=0), dead=Sum("dead_lettered", default=0)
    )
    return {
        "redelivered_per_min": round(sums["redelivered"] / RATE_MINUTES, 1),
        "dead_lettered_per_min": round(sums["dead"] / RATE_MINUTES, 1),
    }
