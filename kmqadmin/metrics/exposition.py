"""One registry per serving process, multiprocess-aware.

With ``PROMETHEUS_MULTIPROC_DIR`` set, prometheus-client keeps every
counter, gauge and histogram of every process in files there (it decides at
import), and a scrape reads them all through a MultiProcessCollector: the
only way a Celery prefork pool's children (where jobs run) or several web
processes add up to one answer. Without it, the process's own default
registry is served. Collectors that read live state at scrape time
(trackers, schedulers, queue gauges) are added either way: they belong to
the serving process and are never written to the files.

The directory must exist and be empty when the processes start (a tmpfs in
docker-compose.yml) and must not be shared between the web and the worker:
each would then serve the other's metrics, and Prometheus would count them
twice.
"""

import os
from pathlib import Path

from prometheus_client import REGISTRY, CollectorRegistry
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from prometheus_client.registry import Collector

MULTIPROC_DIR = "PROMETHEUS_MULTIPROC_DIR"


def registry(*live: Collector) -> CollectorRegistry:
    """The registry to serve: the files or this process's metrics, plus ``live``."""
    served = CollectorRegistry(auto_describe=False)
    if os.environ.get(MULTIPROC_DIR):
        MultiProcessCollector(served)
    else:
        served.register(REGISTRY)
    for collector in live:
        served.register(collector)
    return served


def forget_dead_processes(folder: str) -> None:
    """Before a service starts again on its metrics directory: every process
    that wrote there has ended (the service with its pool), so their live
    gauges (open WebSockets) must stop counting; their counters stay, as
    counters of ended processes do."""
    for gauge in Path(folder).glob("gauge_live*_*.db"):
        mark_process_dead(int(gauge.stem.rsplit("_", 1)[1]), folder)
