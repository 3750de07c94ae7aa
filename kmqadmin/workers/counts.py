"""Tracker counts into the database, for the dashboard's per-minute rates.

A tracker counts acks, redeliveries and dead letters in memory; every few seconds
the worker adds what each of its trackers counted since the last time to
the current minute's row. Counts are per worker and summed by the database,
so any number of workers may share a queue.
"""

from collections.abc import Hashable, Mapping

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from kmqadmin.console.models import Queue, QueueMinute
from kmqadmin.kafka.ownership.service import Service
from kmqadmin.kmq import RedeliveryTracker

# (acked, redelivered, dead-lettered), as a tracker's stats count them.
Counts = tuple[int, int, int]


class CountPublisher:
    def __init__(self) -> None:
        # Keyed by the tracker itself (held, so its id is never reused meanwhile).
        self._seen: dict[RedeliveryTracker, Counts] = {}

    def publish(self, running: Mapping[Hashable, Service]) -> None:
        trackers = [s for s in running.values() if isinstance(s, RedeliveryTracker)]
        self._seen = {t: counts for t, counts in self._seen.items() if t in trackers}
        minute = timezone.now().replace(second=0, microsecond=0)
        for tracker in trackers:
            stats = tracker.stats()
            now = (stats.acked, stats.redelivered, stats.dead_lettered)
            before = self._seen.get(tracker, (0, 0, 0))
            added = tuple(n - b for n, b in zip(now, before, strict=True))
            if any(added):
                queue = _queue_of(tracker)
                if queue is not None:
                    _add(queue, minute, *added)
            self._seen[tracker] = now


def _queue_of(tracker: RedeliveryTracker) -> Queue | None:
    candidates = Queue.objects.select_related("cluster").filter(topic=tracker.config.topic)
    return next((q for q in candidates if q.config() == tracker.config), None)


def _add(queue: Queue, minute, acked: int, redelivered: int, dead: int) -> None:
    with transaction.atomic():
        row, _ = QueueMinute.objects.select_for_update().get_or_create(queue=queue, minute=minute)
        QueueMinute.objects.filter(pk=row.pk).update(
            acked=F("acked") + acked,
            redelivered=F("redelivered") + redelivered,
            dead_lettered=F("dead_lettered") + dead,
        )
