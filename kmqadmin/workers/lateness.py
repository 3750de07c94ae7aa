"""Schedulers' fire lateness into the database, for the lateness alert.

Every few seconds, beside the trackers' counts (counts.py), the worker adds
what each of its schedulers fired since the last time, bucket by bucket, to
its schedules topic's current minute. Summed by the database, so any number
of workers may serve one topic; a scheduler of a queue's backoff (not a
registered schedules topic) is left out."""

from collections import Counter
from collections.abc import Hashable, Mapping
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from kmqadmin.console.models import ScheduleMinute, ScheduleTopic
from kmqadmin.kafka.ownership.service import Service
from kmqadmin.scheduler import Scheduler
from kmqadmin.scheduler.lateness import LatenessSnapshot, bucket_keys


class LatenessPublisher:
    def __init__(self) -> None:
        # Keyed by the scheduler itself (held, so its id is never reused meanwhile).
        self._seen: dict[Scheduler, dict[str, int]] = {}

    def publish(self, running: Mapping[Hashable, Service]) -> None:
        schedulers = [s for s in running.values() if isinstance(s, Scheduler)]
        self._seen = {s: seen for s, seen in self._seen.items() if s in schedulers}
        minute = timezone.now().replace(second=0, microsecond=0)
        for scheduler in schedulers:
            now = per_bucket(scheduler.stats().lateness)
            before = self._seen.get(scheduler, {})
            added = {
                key: n - before.get(key, 0) for key, n in now.items() if n > before.get(key, 0)
            }
            if added:
                topic = _topic_of(scheduler)
                if topic is not None:
                    _add(topic, minute, added)
            self._seen[scheduler] = now


def per_bucket(snapshot: LatenessSnapshot) -> dict[str, int]:
    """The snapshot's cumulative counts as one count per bucket, by bound."""
    cumulative = [count for _, count in snapshot.buckets]
    counts = [c - p for c, p in zip(cumulative, [0, *cumulative[:-1]], strict=True)]
    return dict(zip(bucket_keys(), counts, strict=True))


def _topic_of(scheduler: Scheduler) -> ScheduleTopic | None:
    candidates = ScheduleTopic.objects.select_related("cluster").filter(
        topic=scheduler.config.topic
    )
    return next((t for t in candidates if t.config() == scheduler.config), None)


def _add(topic: ScheduleTopic, minute: datetime, added: dict[str, int]) -> None:
    with transaction.atomic():
        row, _ = ScheduleMinute.objects.select_for_update().get_or_create(
            schedules=topic, minute=minute
        )
        row.late = dict(Counter(row.late) + Counter(added))
        row.save(update_fields=["late"])
