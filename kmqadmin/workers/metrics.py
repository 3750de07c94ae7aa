"""The hosted trackers' and schedulers' counters, read when Prometheus scrapes.

The trackers and schedulers already count what they do (TrackerStats,
SchedulerStats); this collector turns one ``stats()`` call per service into
metric families at scrape time, so their loops pay nothing per message for
being measured. Services of one topic on one worker (a queue on two
clusters) are summed under that topic.
"""

from collections import defaultdict
from collections.abc import Iterator, Mapping

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from kmqadmin.kmq import RedeliveryTracker
from kmqadmin.kmq.tracking.stats import TrackerStats
from kmqadmin.scheduler import Scheduler
from kmqadmin.scheduler.stats import SchedulerStats
from kmqadmin.workers.host import ServiceHost

# Stats field -> help; the metric is named after the field. Counters end in _total.
TRACKER_COUNTERS = {
    "acked": "Deliveries closed by an end marker (acks)",
    "redelivered": "Copies sent again after a timeout or a retry",
    "dead_lettered": "Messages moved to the DLQ",
    "undecodable": "Messages dead-lettered because their headers do not decode",
    "skipped": "Marker records that are not markers, and due messages gone from the queue",
    "rebalances": "Markers-partition assignments received",
}
TRACKER_GAUGES = {"markers_lag": "Markers not yet read by this worker's trackers"}
SCHEDULE_COUNTERS = {
    "fired": "Schedules fired",
    "skipped": "Schedule records that do not decode, skipped",
    "undeliverable": "Due schedules whose target topic does not exist",
    "forbidden": "Due schedules whose target is not an allowed one",
}
SCHEDULE_GAUGES = {"held": "Schedules held in memory, due within the horizon"}
SCHEDULER_COUNTERS = {"rebalances": "Schedules-partition assignments received"}


class HostedServices(Collector):
    def __init__(self, host: ServiceHost) -> None:
        self.host = host

    def collect(self) -> Iterator[Metric]:
        trackers: dict[str, list[TrackerStats]] = defaultdict(list)
        schedulers: dict[str, list[SchedulerStats]] = defaultdict(list)
        for service in self.host.running.values():
            if isinstance(service, RedeliveryTracker):
                trackers[service.config.topic].append(service.stats())
            elif isinstance(service, Scheduler):
                schedulers[service.config.topic].append(service.stats())
        yield from _families(
            "kmqadmin_tracker_", TRACKER_COUNTERS, CounterMetricFamily, "queue", trackers
        )
        yield from _families(
            "kmqadmin_tracker_", TRACKER_GAUGES, GaugeMetricFamily, "queue", trackers
        )
        partitions = GaugeMetricFamily(
            "kmqadmin_tracker_partitions", "Markers partitions this worker owns", labels=["queue"]
        )
        for topic, stats in sorted(trackers.items()):
            partitions.add_metric([topic], sum(len(s.partitions) for s in stats))
        yield partitions
        yield from _families(
            "kmqadmin_schedules_", SCHEDULE_COUNTERS, CounterMetricFamily, "topic", schedulers
        )
        yield from _families(
            "kmqadmin_schedules_", SCHEDULE_GAUGES, GaugeMetricFamily, "topic", schedulers
        )
        yield from _families(
            "kmqadmin_scheduler_", SCHEDULER_COUNTERS, CounterMetricFamily, "topic", schedulers
        )
        yield _lateness(schedulers)


def _families(
    prefix: str,
    fields: dict[str, str],
    kind: type[CounterMetricFamily] | type[GaugeMetricFamily],
    label: str,
    by_topic: Mapping[str, list[TrackerStats]] | Mapping[str, list[SchedulerStats]],
) -> Iterator[Metric]:
    """One family per stats field, the services of one topic summed."""
    for field, documentation in fields.items():
        family = kind(prefix + field, documentation, labels=[label])
        for topic, stats in sorted(by_topic.items()):
            family.add_metric([topic], sum(getattr(s, field) for s in stats))
        yield family


def _lateness(by_topic: dict[str, list[SchedulerStats]]) -> Metric:
    family = HistogramMetricFamily(
        "kmqadmin_schedules_lateness_seconds",
        "How late schedules fired: from their due time to their commit",
        labels=["topic"],
    )
    for topic, stats in sorted(by_topic.items()):
        snapshots = [s.lateness for s in stats]
        buckets = [
            (_le(bound), sum(s.buckets[i][1] for s in snapshots))
            for i, (bound, _) in enumerate(snapshots[0].buckets)
        ]
        family.add_metric([topic], buckets, sum(s.sum_s for s in snapshots))
    return family


def _le(bound: float) -> str:
    return "+Inf" if bound == float("inf") else repr(bound)
