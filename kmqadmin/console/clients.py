"""The Kafka clients this web process keeps: one of each kind per queue or
schedules topic.

Created on first use and kept, keyed by the queue's whole configuration (an
edited queue gets new ones): a request then pays for no connection set-up,
and an InFlightView reads only the markers written since the last request.
"""

import threading
from collections.abc import Callable

from kmqadmin.kmq import (
    DeadLetters,
    InFlightView,
    LifecycleFinder,
    MarkerWriter,
    QueueConfig,
    QueueGauges,
    QueueProducer,
)
from kmqadmin.scheduler import ScheduleClient, SchedulerConfig, UpcomingView

_clients: dict[tuple[str, str], object] = {}
_lock = threading.Lock()


def _kept[C, T](kind: Callable[[C], T], config: C) -> T:
    key = (kind.__name__, repr(config))
    with _lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = kind(config)
    return client  # type: ignore[return-value]


def in_flight(config: QueueConfig) -> InFlightView:
    """The queue's in-flight view, caught up with the markers topic."""
    view = _kept(InFlightView, config)
    view.refresh()
    return view


def producer(config: QueueConfig) -> QueueProducer:
    return _kept(QueueProducer, config)


def marker_writer(config: QueueConfig) -> MarkerWriter:
    return _kept(MarkerWriter, config)


def gauges(config: QueueConfig) -> QueueGauges:
    return _kept(QueueGauges, config)


def dead_letters(config: QueueConfig) -> DeadLetters:
    return _kept(DeadLetters, config)


def upcoming(config: SchedulerConfig) -> UpcomingView:
    """The topic's live schedules, caught up (or as far as one refresh reads)."""
    view = _kept(UpcomingView, config)
    view.refresh()
    return view


def schedule_client(config: SchedulerConfig) -> ScheduleClient:
    return _kept(ScheduleClient, config)


def lifecycle(config: QueueConfig) -> LifecycleFinder:
    return _kept(LifecycleFinder, config)
