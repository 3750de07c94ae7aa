"""Which services the workers run, read from the registry (database only)."""

import pytest

from kmqadmin.console.models import Cluster, Queue, ScheduleTopic
from kmqadmin.kmq import RedeliveryTracker
from kmqadmin.workers.services import wanted_services

pytestmark = pytest.mark.django_db
SLOT = "celery@test"


def built(wanted: dict) -> list[tuple[str, str]]:
    services = [make() for make in wanted.values()]
    return sorted((type(s).__name__, s.config.topic) for s in services)


def test_a_tracker_per_queue_and_a_scheduler_per_schedules_topic() -> None:
    cluster = Cluster.objects.create(name="c", bootstrap_servers="127.0.0.1:1")
    Queue.objects.create(cluster=cluster, topic="plain", group_id="g")
    Queue.objects.create(cluster=cluster, topic="slow", group_id="g2", backoff_initial_ms=500)
    ScheduleTopic.objects.create(cluster=cluster, topic="launches", group_id="s")
    assert built(wanted_services(SLOT)) == [
        ("RedeliveryTracker", "plain"),
        ("RedeliveryTracker", "slow"),
        ("Scheduler", "launches"),
        ("Scheduler", "slow__schedules"),
    ]


def test_every_service_owns_in_the_workers_slot() -> None:
    cluster = Cluster.objects.create(name="c", bootstrap_servers="127.0.0.1:1")
    Queue.objects.create(cluster=cluster, topic="slow", group_id="g", backoff_initial_ms=500)
    services = [make() for make in wanted_services(SLOT).values()]
    assert [s.owned.slot for s in services] == [SLOT, SLOT]


def test_an_edited_queue_gets_a_new_key() -> None:
    cluster = Cluster.objects.create(name="c", bootstrap_servers="127.0.0.1:1")
    queue = Queue.objects.create(cluster=cluster, topic="q", group_id="g")
    before = set(wanted_services(SLOT))
    queue.message_timeout_ms = 5_000
    queue.save()
    after = set(wanted_services(SLOT))
    assert before.isdisjoint(after) and len(after) == 1
    assert isinstance(next(iter(wanted_services(SLOT).values()))(), RedeliveryTracker)


def test_a_share_queue_gets_no_tracker_and_its_scheduler_only_with_a_backoff() -> None:
    """The broker tracks a share queue's deliveries; its delayed retries still
    go through our scheduler."""
    cluster = Cluster.objects.create(name="c", bootstrap_servers="127.0.0.1:1")
    Queue.objects.create(cluster=cluster, topic="plain", group_id="g")
    Queue.objects.create(cluster=cluster, topic="shared", group_id="g2", backend="share")
    Queue.objects.create(
        cluster=cluster, topic="delayed", group_id="g3", backend="share", backoff_initial_ms=500
    )
    assert built(wanted_services(SLOT)) == [
        ("RedeliveryTracker", "plain"),
        ("Scheduler", "delayed__schedules"),
    ]
