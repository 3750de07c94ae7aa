"""Which services the workers run: read from the queues and schedules registered."""

from collections.abc import Callable
from functools import partial

from kmqadmin.console.models import Queue, ScheduleTopic
from kmqadmin.kafka.service import Service
from kmqadmin.kmq import RedeliveryTracker
from kmqadmin.scheduler import Scheduler


def wanted_services() -> dict[str, Callable[[], Service]]:
    """A tracker per registered queue, a scheduler per schedules topic (a
    queue's own, when it has a backoff, and each registered one). Keys hold
    the whole configuration, so an edited queue gets a fresh tracker."""
    services: dict[str, Callable[[], Service]] = {}
    for queue in Queue.objects.select_related("cluster"):
        config = queue.config()
        services[f"tracker {config!r}"] = partial(RedeliveryTracker, config)
        if config.backoff is not None:
            scheduler = config.scheduler_config()
            services[f"scheduler {scheduler!r}"] = partial(Scheduler, scheduler)
    for topic in ScheduleTopic.objects.select_related("cluster"):
        scheduler = topic.config()
        services[f"scheduler {scheduler!r}"] = partial(Scheduler, scheduler)
    return services
