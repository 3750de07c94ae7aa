"""Which services the workers run: read from the queues and schedules registered."""

import logging
from collections.abc import Callable
from functools import partial
from typing import Any

from kmqadmin.console.models import Queue, ScheduleTopic
from kmqadmin.kafka.client.errors import KafkaSetupError
from kmqadmin.kafka.ownership.service import Service
from kmqadmin.kmq import RedeliveryTracker
from kmqadmin.scheduler import Scheduler

log = logging.getLogger(__name__)
# What was logged already: a cluster's bad setting is said once, not every refresh.
_reported: set[str] = set()


def wanted_services(slot: str) -> dict[str, Callable[[], Service]]:
    """A tracker per registered kmq queue (a share queue's broker is its
    tracker), a scheduler per schedules topic (a queue's own, when it has a
    backoff or takes delayed sends, whatever its backend, and each
    registered one). Keys hold the whole configuration (secrets masked), so
    an edited queue gets a fresh tracker. A queue whose cluster cannot be
    used as configured is left out, and the others still run. ``slot``
    names this worker among the owners (kafka/ownership/owned.py)."""
    services: dict[str, Callable[[], Service]] = {}
    for queue in Queue.objects.select_related("cluster"):
        if (config := _configured(queue)) is None:
            continue
        if config.backend == "kmq":
            services[f"tracker {config!r}"] = partial(RedeliveryTracker, config, slot=slot)
        if config.has_scheduler:
            scheduler = config.scheduler_config()
            services[f"scheduler {scheduler!r}"] = partial(Scheduler, scheduler, slot=slot)
    for topic in ScheduleTopic.objects.select_related("cluster"):
        if (scheduler := _configured(topic)) is not None:
            services[f"scheduler {scheduler!r}"] = partial(Scheduler, scheduler, slot=slot)
    return services


def _configured(registered: Queue | ScheduleTopic) -> Any:
    """Its QueueConfig or SchedulerConfig; None, said once, when its cluster's
    settings cannot be used."""
    try:
        return registered.config()
    except KafkaSetupError as exc:
        if str(exc) not in _reported:
            _reported.add(str(exc))
            log.error("not serving %s: %s", registered, exc)
        return None
