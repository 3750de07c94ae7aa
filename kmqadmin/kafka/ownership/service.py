"""The start/stop/run shape of the long-running services (tracker, scheduler)."""

import logging
import threading
import time
from abc import ABC, abstractmethod

from confluent_kafka import KafkaException

from kmqadmin.kafka.ownership.restart_pause import RestartPause

log = logging.getLogger(__name__)


class Service(ABC):
    """``run()`` blocks until ``stop()``; ``start()`` runs it on a daemon thread,
    which is how a Celery bootstep or a test hosts it.

    A crash of ``serve()`` (broker away, a partition that cannot be set up)
    restarts it after a pause (restart_pause.py) instead of ending the
    service: a tracker or scheduler that stays down silently stops
    redeliveries or schedules, which is worse than one that keeps trying and
    says so.
    """

    thread_name = "kmq-service"

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.restarts = 0

    @abstractmethod
    def serve(self) -> None:
        """One life of the service, with its own clients; it must return soon
        after ``_stop`` is set and release what it opened, whether it returns
        or raises."""

    def run(self) -> None:
        pause = RestartPause()
        while not self._stop.is_set():
            began = time.monotonic()
            try:
                self.serve()
                return
            except Exception as exc:
                if self._stop.is_set():
                    return  # a life cut short by stop(): not a crash
                wait_s = pause.after(time.monotonic() - began)
                self._log_crash(exc, wait_s)
            if self._stop.wait(wait_s):
                return  # stopped during the pause: no new life
            self.restarts += 1

    def _log_crash(self, exc: Exception, wait_s: float) -> None:
        """One line for a Kafka error (a broker away or stalled is an outage
        to ride out, not a bug); a traceback for anything else."""
        if isinstance(exc, KafkaException):
            log.warning(
                "%s stopped on a Kafka error (%s); restarting in %.0f s",
                self.thread_name,
                exc,
                wait_s,
            )
            return
        log.error("%s crashed; restarting in %.0f s", self.thread_name, wait_s, exc_info=exc)

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self.run, name=self.thread_name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
