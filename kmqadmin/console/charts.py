"""Chart.js data from the analytics minutes (LifecycleMinute), for the
dashboard and queue pages. Minutes the pipeline has not written yet are
absent, and the charts say so rather than drawing zeros."""

from collections.abc import Iterable
from datetime import timedelta

from django.db.models import QuerySet, Sum
from django.utils import timezone

from kmqadmin.console.models import LifecycleMinute, Queue
from kmqadmin.pipeline import columns

HOURS = 3
_COUNT_LABELS = ("Produced", "Acked", "Redelivered", "Dead-lettered")
COUNTS = dict(zip(columns.COUNTS, _COUNT_LABELS, strict=True))
_KIND_LABELS = ("End-to-end", "Processing")
QUANTILES = {
    columns.quantile_column(kind, q): f"{label} p{columns.percent(q)}"
    for kind, label in zip(columns.QUANTILE_KINDS, _KIND_LABELS, strict=True)
    for q in columns.QUANTILES
}

Chart = dict[str, object]


def _recent(queues: Iterable[Queue]) -> QuerySet[LifecycleMinute]:
    since = timezone.now() - timedelta(hours=HOURS)
    return LifecycleMinute.objects.filter(queue__in=queues, minute__gte=since)


def _label(minute) -> str:
    return minute.strftime("%H:%M")


def counts_chart(queues: Iterable[Queue]) -> Chart:
    """Messages per minute, summed over ``queues``."""
    rows = (
        _recent(queues)
        .values("minute")
        .order_by("minute")
        .annotate(**{name: Sum(name) for name in COUNTS})
    )
    return {
        "labels": [_label(r["minute"]) for r in rows],
        "datasets": [
            {"label": label, "data": [r[name] for r in rows]} for name, label in COUNTS.items()
        ],
    }


def latency_chart(queue: Queue) -> Chart | None:
    """One queue's end-to-end and processing time quantiles, in seconds;
    None for a share queue, which has none: the broker keeps its ack times
    (the page says so rather than drawing an empty chart)."""
    if queue.backend == "share":
        return None
    rows = list(_recent([queue]).order_by("minute").values("minute", *QUANTILES))
    return {
        "labels": [_label(r["minute"]) for r in rows],
        "datasets": [
            {"label": label, "data": [_seconds(r[name]) for r in rows]}
            for name, label in QUANTILES.items()
        ],
    }


def _seconds(ms: float | None) -> float | None:
    return None if ms is None else round(ms / 1000, 3)


def p95_by_queue(queues: Iterable[Queue]) -> Chart:
    """Each kmq queue's end-to-end latency p95, in seconds, on one time axis
    (share queues have no latency to draw)."""
    rows = list(
        _recent(queues)
        .exclude(queue__backend="share")
        .order_by("minute")
        .values("queue__topic", "minute", "latency_p95_ms")
    )
    minutes = sorted({r["minute"] for r in rows})
    at = {m: i for i, m in enumerate(minutes)}
    series: dict[str, list[float | None]] = {}
    for r in rows:
        line = series.setdefault(r["queue__topic"], [None] * len(minutes))
        line[at[r["minute"]]] = _seconds(r["latency_p95_ms"])
    return {
        "labels": [_label(m) for m in minutes],
        "datasets": [{"label": topic, "data": line} for topic, line in series.items()],
    }
