"""The lateness alert: a real scheduler's fires reach the database as a
worker publishes them, and the p99 is read from there."""

from datetime import timedelta

import pytest
from django.utils import timezone

from kmqadmin.console.models import AlertRule, Cluster, ScheduleMinute, ScheduleTopic
from kmqadmin.console.services.alerts.evaluation import check_all
from kmqadmin.scheduler import ScheduleClient, Scheduler, SchedulerConfig
from kmqadmin.scheduler.lateness import bucket_keys
from kmqadmin.workers.lateness import LatenessPublisher
from tests.process import wait_for
from tests.schedule_helpers import in_seconds

pytestmark = pytest.mark.django_db


def _registered(schedules: SchedulerConfig) -> ScheduleTopic:
    cluster = Cluster.objects.create(name="local", bootstrap_servers=schedules.bootstrap_servers)
    return ScheduleTopic.objects.create(
        cluster=cluster, topic=schedules.topic, group_id=schedules.group_id
    )


def test_fires_are_published_once_and_their_p99_is_checked(
    schedules: SchedulerConfig, target: str
) -> None:
    topic = _registered(schedules)
    scheduler = Scheduler(topic.config())
    scheduler.start()
    try:
        with ScheduleClient(topic.config()) as client:
            for n in range(3):
                client.schedule(f"s-{n}", in_seconds(1), target, value=b"x")
        wait_for(lambda: scheduler.stats().fired == 3, 30, "three fires")
        publisher = LatenessPublisher()
        publisher.publish({"s": scheduler})
        publisher.publish({"s": scheduler})  # nothing new: nothing added
    finally:
        scheduler.stop()
    [row] = ScheduleMinute.objects.filter(schedules=topic)
    assert sum(row.late.values()) == 3 and set(row.late) <= set(bucket_keys())

    rule = AlertRule.objects.create(schedules=topic, condition="lateness_p99", threshold=60)
    assert check_all()["fired"] == 0
    rule.refresh_from_db()
    assert 0 < rule.value <= 30 and rule.check_error == ""  # fired within 30 s of due


def test_a_late_minute_fires_the_alert(schedules: SchedulerConfig) -> None:
    topic = _registered(schedules)
    now = timezone.now()
    on_time = {bucket_keys()[0]: 98, "a-bound-no-longer-used": 7}
    late = on_time | {"30": 3}  # 3 of 101 fired 10 to 30 s late
    ScheduleMinute.objects.create(schedules=topic, minute=now - timedelta(minutes=30), late=late)
    ScheduleMinute.objects.create(schedules=topic, minute=now, late=on_time)
    rule = AlertRule.objects.create(
        schedules=topic, condition="lateness_p99", threshold=5, window_minutes=10
    )
    assert check_all(now)["fired"] == 0  # the late minute is outside the window
    rule.window_minutes = 60
    rule.save(update_fields=["window_minutes"])
    assert check_all(now + timedelta(seconds=1))["fired"] == 1
    rule.refresh_from_db()
    assert rule.value == 30.0
