"""Per-queue gauges, read when Prometheus scrapes: the dashboard's numbers.

Depth, in flight, the oldest delivery's age and the DLQ's size come from
queue_stats(), the same offsets-and-markers reading the dashboard shows, so
Grafana and the console never disagree. A queue whose numbers cannot be read
now (Kafka away, a bad cluster setting) is left out of the gauges, logged,
and reported by ``kmqadmin_queue_stats_up`` 0: a scrape never fails for it.

Queues are read on a small pool, all at once, and a scrape waits at most
DEADLINE_S for them: a cluster that does not answer costs the client's
10 s timeout, which would otherwise outlast Prometheus' scrape timeout. A
queue's read still under way from an earlier scrape is not started again,
so a dead cluster holds one thread, not one per scrape.
"""

import logging
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait

from django.db import connection
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from kmqadmin.console.models import Queue
from kmqadmin.console.services.queues.stats import QueueStats, queue_stats

log = logging.getLogger(__name__)

DEADLINE_S = 5.0
_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="kmq-metrics")
_reads: dict[int, Future[QueueStats]] = {}  # queue pk -> its latest read
_lock = threading.Lock()

GAUGES = (
    ("kmqadmin_queue_depth", "Messages the workers have not taken yet", "depth"),
    ("kmqadmin_queue_in_flight", "Deliveries started and not yet acked (kmq queues)", "in_flight"),
    ("kmqadmin_queue_dead_letters", "Letters in the queue's DLQ", "dead_letters"),
    (
        "kmqadmin_share_held",
        "Records a share queue's consumers held at their latest per-minute reports",
        "share_held",
    ),
    (
        "kmqadmin_share_refused_acks_per_minute",
        "Acknowledgements the broker refused, per minute over the last 5 (share queues)",
        "refused_acks_per_min",
    ),
    (
        "kmqadmin_share_expired_locks_per_minute",
        "Acknowledgements made after the lock ran out, per minute over the last 5 (share queues)",
        "expired_locks_per_min",
    ),
)


class QueueGaugesCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        read = dict(_read_all())
        for name, documentation, field in GAUGES:
            family = GaugeMetricFamily(name, documentation, labels=["queue"])
            for topic, stats in read.items():
                if stats is not None and (value := getattr(stats, field)) is not None:
                    family.add_metric([topic], value)
            yield family
        oldest = GaugeMetricFamily(
            "kmqadmin_queue_oldest_in_flight_seconds",
            "Age of the oldest delivery in flight (kmq queues with one open)",
            labels=["queue"],
        )
        up = GaugeMetricFamily(
            "kmqadmin_queue_stats_up", "1 when the queue's gauges could be read", labels=["queue"]
        )
        for topic, stats in read.items():
            up.add_metric([topic], 0 if stats is None else 1)
            if stats is not None and stats.oldest_in_flight_ms is not None:
                oldest.add_metric([topic], stats.oldest_in_flight_ms / 1000)
        yield oldest
        yield up


def _read_all() -> Iterator[tuple[str, QueueStats | None]]:
    try:
        queues = list(Queue.objects.select_related("cluster"))
    except Exception:
        log.exception("metrics: the registered queues could not be listed")
        return
    with _lock:
        for queue in queues:
            read = _reads.get(queue.pk)
            if read is None or read.done():
                _reads[queue.pk] = _pool.submit(_read, queue)
        reads = {queue.topic: _reads[queue.pk] for queue in queues}
    wait(reads.values(), timeout=DEADLINE_S)
    for topic, read in reads.items():
        if not read.done():
            log.warning("metrics: queue %s did not answer within %s s", topic, DEADLINE_S)
            yield topic, None
        elif (exc := read.exception()) is not None:  # one queue's trouble: serve the rest
            log.warning("metrics: no gauges for queue %s: %s", topic, exc)
            yield topic, None
        else:
            yield topic, read.result()


def _read(queue: Queue) -> QueueStats:
    try:
        return queue_stats(queue)
    finally:
        connection.close()  # this pool thread's own, opened by the rates' query
