"""The Kafka clients this web process keeps: one of each kind per queue.

Created on first use and kept, keyed by the queue's whole configuration (an
edited queue gets new ones): a request then pays for no connection set-up,
and an InFlightView reads only the markers written since the last request.
"""

import threading
from collections.abc import Callable

from kmqadmin.kmq import InFlightView, MarkerWriter, QueueConfig, QueueProducer

_clients: dict[tuple[str, str], object] = {}
_lock = threading.Lock()


def _kept[T](kind: Callable[[QueueConfig], T], config: QueueConfig) -> T:
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
