"""Each queue's last half hour, minute by minute, as small inline SVG lines.

From the workers' own counts (QueueMinute for a kmq queue, the clients'
counts topic for a share queue), so the dashboard has a picture of the
traffic before the analytics pipeline has ever run. Drawn on the server: the
live dashboard push carries them like any other cell, no chart library.
"""

from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from kmqadmin.console.models import Queue, QueueMinute
from kmqadmin.console.services.clusters import clients
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kmq.share.counts import MINUTE_MS

MINUTES = 30  # the current minute so far and the 29 before it
WIDTH, HEIGHT = 120, 24  # the SVG's viewBox; a line's top pixel is its busiest minute
SERIES = ("acked", "redelivered", "dead_lettered")


@dataclass(frozen=True)
class Line:
    series: str
    counts: tuple[int, ...]  # oldest minute first
    points: str  # the SVG polyline's

    @property
    def total(self) -> int:
        return sum(self.counts)

    @property
    def label(self) -> str:
        return self.series.replace("_", "-")


def sparklines(queue: Queue) -> list[Line]:
    """acked, redelivered and dead-lettered per minute, drawn to one scale
    so their heights compare."""
    counts = _share_counts(queue) if queue.backend == "share" else _tracker_counts(queue)
    top = max(1, *(max(c) for c in counts.values()))
    return [Line(name, counts[name], _points(counts[name], top)) for name in SERIES]


def _tracker_counts(queue: Queue) -> dict[str, tuple[int, ...]]:
    now = timezone.now().replace(second=0, microsecond=0)
    first = now - timedelta(minutes=MINUTES - 1)
    rows = QueueMinute.objects.filter(queue=queue, minute__gte=first).values_list("minute", *SERIES)
    by_minute = {minute: counts for minute, *counts in rows}
    minutes = [first + timedelta(minutes=i) for i in range(MINUTES)]
    columns = zip(*(by_minute.get(m, (0, 0, 0)) for m in minutes), strict=True)
    return dict(zip(SERIES, map(tuple, columns), strict=True))


def _share_counts(queue: Queue) -> dict[str, tuple[int, ...]]:
    """A share queue's clients count accepts, releases and delayed retries
    (its redeliveries) and moves to the DLQ."""
    reader = clients.share_counts(queue.config())
    minutes = reader.last(MINUTES, now=now_ms() + MINUTE_MS).minutes
    return {
        "acked": tuple(c.accepted for c in minutes),
        "redelivered": tuple(c.released + c.delayed for c in minutes),
        "dead_lettered": tuple(c.dead_lettered for c in minutes),
    }


def _points(counts: tuple[int, ...], top: int) -> str:
    step = WIDTH / (len(counts) - 1)
    return " ".join(
        f"{i * step:.1f},{HEIGHT - 1 - (HEIGHT - 2) * n / top:.1f}" for i, n in enumerate(counts)
    )
