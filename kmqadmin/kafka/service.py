"""The start/stop/run shape of the long-running services (tracker, scheduler)."""

import logging
import threading
from abc import ABC, abstractmethod

from confluent_kafka import KafkaException
from tenacity import (
    RetryCallState,
    RetryError,
    Retrying,
    stop_when_event_set,
    wait_exponential,
)

log = logging.getLogger(__name__)

# Pauses between restarts after a crash: 1 s, 2 s, 4 s ... up to this.
MAX_RESTART_WAIT_S = 30


class Service(ABC):
    """``run()`` blocks until ``stop()``; ``start()`` runs it on a daemon thread,
    which is how a Celery bootstep or a test hosts it.

    A crash of ``serve()`` (broker away, a partition that cannot be set up)
    restarts it after a growing pause instead of ending the service: a
    tracker or scheduler that stays down silently stops redeliveries or
    schedules, which is worse than one that keeps trying and says so.
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
        retrying = Retrying(
            wait=wait_exponential(multiplier=1, max=MAX_RESTART_WAIT_S),
            stop=stop_when_event_set(self._stop),
            sleep=self._stop.wait,
            before_sleep=self._log_crash,
        )
        try:
            for attempt in retrying:
                with attempt:
                    if self._stop.is_set():
                        return  # stopped during the pause: no new life
                    if attempt.retry_state.attempt_number > 1:
                        self.restarts += 1
                    self.serve()
        except RetryError:
            pass  # stopped while waiting to restart after a crash

    def _log_crash(self, state: RetryCallState) -> None:
        """One line for a Kafka error (a broker away or stalled is an outage
        to ride out, not a bug); a traceback for anything else."""
        assert state.outcome is not None and state.next_action is not None
        exc = state.outcome.exception()
        if isinstance(exc, KafkaException):
            log.warning(
                "%s stopped on a Kafka error (%s); restarting in %.0f s",
                self.thread_name,
                exc,
                state.next_action.sleep,
            )
            return
        log.error(
            "%s crashed; restarting in %.0f s",
            self.thread_name,
            state.next_action.sleep,
            exc_info=exc,
        )

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self.run, name=self.thread_name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
