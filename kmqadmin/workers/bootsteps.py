"""The Celery worker bootstep that hosts the trackers and schedulers.

`celery -A kmqadmin worker` runs, next to its task pool, one tracker per
registered queue and one scheduler per schedules topic. Every worker runs
them all: trackers share a queue's markers partitions through their
consumer group, schedulers their schedules partitions, so scaling is
starting more workers, and a worker that dies hands its partitions over.
It also serves the worker's metrics port (metrics_port.py), which reads
those services' counters when scraped.
"""

import logging
import threading
import time
from wsgiref.simple_server import WSGIServer

from celery import bootsteps
from django.conf import settings
from django.db import close_old_connections

from kmqadmin.workers import metrics_port
from kmqadmin.workers.counts import CountPublisher
from kmqadmin.workers.host import ServiceHost
from kmqadmin.workers.lateness import LatenessPublisher
from kmqadmin.workers.services import wanted_services

log = logging.getLogger(__name__)

# How often the trackers' counts reach the database (the dashboard's rates).
COUNTS_EVERY_S = 5.0


class HostServices(bootsteps.StartStopStep):
    # After the pool: its processes are forked before any Kafka client exists.
    requires = {"celery.worker.components:Pool"}

    def __init__(self, worker, **kwargs) -> None:
        super().__init__(worker, **kwargs)
        # The node name: unique among a cluster's workers (Celery warns of a
        # duplicate) and kept across a restart, so a restarted worker's
        # owners abort what it left open at once (kafka/ownership/owned.py).
        self.slot = worker.hostname
        self.host = ServiceHost()
        self.counts = CountPublisher()
        self.lateness = LatenessPublisher()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._metrics: WSGIServer | None = None

    def start(self, worker) -> None:
        self._stop.clear()
        self._refresh()
        self._thread = threading.Thread(target=self._watch, name="kmq-services", daemon=True)
        self._thread.start()
        self._metrics = metrics_port.serve(self.host)

    def stop(self, worker) -> None:
        metrics_port.close(self._metrics)
        self._metrics = None
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)
            self._thread = None
        self.host.stop_all()

    def _watch(self) -> None:
        """Picks up queues registered, edited or removed while the worker
        runs, and adds the trackers' counts and the schedulers' lateness to
        the database's minutes."""
        every = settings.KMQ_SERVICES_REFRESH_S
        next_refresh = time.monotonic() + every
        while not self._stop.wait(min(every, COUNTS_EVERY_S)):
            try:
                if time.monotonic() >= next_refresh:
                    next_refresh = time.monotonic() + every
                    self._refresh()
                self.counts.publish(self.host.running)
                self.lateness.publish(self.host.running)
            except Exception:  # the database may be away for a while: keep what runs
                log.exception("could not refresh the hosted services; keeping the current ones")
            finally:
                close_old_connections()

    def _refresh(self) -> None:
        close_old_connections()
        try:
            self.host.reconcile(wanted_services(self.slot))
        finally:
            close_old_connections()
