"""The hosted trackers' and schedulers' counters, read when Prometheus scrapes.

The trackers and schedulers already count what they do (TrackerStats,
SchedulerStats); this collector turns one ``stats()`` call per service into
metric families at scrape time, so their loops pay nothing per message for
being measured. Services of one topic on one worker (a queue on two
clusters) are summed under that topic.
"""

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from kmqadmin.kmq import RedeliveryTracker
from kmqadmin.kmq.stats import TrackerStats
from kmqadmin.scheduler import Scheduler
from kmqadmin.scheduler.stats import SchedulerStats

from .host import ServiceHost

# (metric name, help, reads the number from the stats); counters end in _total.
TRACKER = (
    ("kmqadmin_tracker_acked", "Deliveries closed by an end marker (acks)", lambda s: s.acked),
    (
        "kmqadmin_tracker_redelivered",
        "Copies sent again after a timeout or a retry",
        lambda s: s.redelivered,
    ),
    ("kmqadmin_tracker_dead_lettered", "Messages moved to the DLQ", lambda s: s.dead_lettered),
    (
        "kmqadmin_tracker_undecodable",
        "Messages dead-lettered because their headers do not decode",
        lambda s: s.undecodable,
    ),
    (
        "kmqadmin_tracker_skipped",
        "Marker records that are not markers, and due messages gone from the queue",
        lambda s: s.skipped,
    ),
    (
        "kmqadmin_tracker_rebalances",
        "Markers-partition assignments received",
        lambda s: s.rebalances,
    ),
)
TRACKER_GAUGES = (
    (
        "kmqadmin_tracker_markers_lag",
        "Markers not yet read by the trackers",
        lambda s: s.markers_lag,
    ),
    (
        "kmqadmin_tracker_partitions",
        "Markers partitions this worker owns",
        lambda s: len(s.partitions),
    ),
)
SCHEDULER = (
    ("kmqadmin_schedules_fired", "Schedules fired", lambda s: s.fired),
    (
        "kmqadmin_schedules_skipped",
        "Schedule records that do not decode, skipped",
        lambda s: s.skipped,
    ),
    (
        "kmqadmin_schedules_undeliverable",
        "Due schedules whose target topic does not exist",
        lambda s: s.undeliverable,
    ),
    (
        "kmqadmin_schedules_forbidden",
        "Due schedules whose target is not an allowed one",
        lambda s: s.forbidden,
    ),
    (
        "kmqadmin_scheduler_rebalances",
        "Schedules-partition assignments received",
        lambda s: s.rebalances,
    ),
)
SCHEDULER_GAUGES = (
    (
        "kmqadmin_schedules_held",
        "Schedules held in memory, due within the horizon",
        lambda s: s.held,
    ),
)

type Read[S] = Callable[[S], int]


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
        yield from _families(trackers, "queue", TRACKER, CounterMetricFamily)
        yield from _families(trackers, "queue", TRACKER_GAUGES, GaugeMetricFamily)
        yield from _families(schedulers, "topic", SCHEDULER, CounterMetricFamily)
        yield from _families(schedulers, "topic", SCHEDULER_GAUGES, GaugeMetricFamily)
        yield _lateness(schedulers)


def _families[S](
    by_topic: dict[str, list[S]],
    label: str,
    specs: Iterable[tuple[str, str, Read[S]]],
    kind: type[CounterMetricFamily] | type[GaugeMetricFamily],
) -> Iterator[Metric]:
    for name, documentation, read in specs:
        family = kind(name, documentation, labels=[label])
        for topic, stats in sorted(by_topic.items()):
            family.add_metric([topic], sum(read(s) for s in stats))
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
