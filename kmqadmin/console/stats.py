"""A queue's gauges, as the dashboard and the API's stats show them."""

from dataclasses import asdict, dataclass

from kmqadmin.kafka.clock import now_ms

from . import clients
from .models import Queue


@dataclass(frozen=True)
class QueueStats:
    depth: int  # not yet taken by the workers
    in_flight: int
    oldest_in_flight_ms: int | None  # age of the oldest open delivery
    dead_letters: int

    def as_dict(self) -> dict:
        return asdict(self)


def queue_stats(queue: Queue) -> QueueStats:
    """Offsets and the in-flight view only: no records read, so the
    dashboard can ask every few seconds."""
    config = queue.config()
    gauges, view = clients.gauges(config), clients.in_flight(config)
    oldest = view.oldest_deadline()
    started = None if oldest is None else oldest - config.message_timeout_ms
    return QueueStats(
        depth=gauges.depth(),
        in_flight=view.count(),
        oldest_in_flight_ms=None if started is None else max(0, now_ms() - started),
        dead_letters=gauges.dead_letters(),
    )
