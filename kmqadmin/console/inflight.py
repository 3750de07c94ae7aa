"""Pages of a queue's in-flight deliveries, as the console and the API show them."""

from dataclasses import dataclass

from confluent_kafka import Message as KafkaMessage

from kmqadmin.kmq import InFlight, QueueConfig
from kmqadmin.kmq import headers as h

from . import clients
from .models import Queue


@dataclass(frozen=True)
class InFlightPage:
    count: int  # messages in flight in all
    rows: list[dict]


def in_flight_page(queue: Queue, limit: int, after: tuple[int, int] | None = None) -> InFlightPage:
    """Up to ``limit`` deliveries after the cursor, with the few fields read
    back from their records (one read per partition for the whole page)."""
    config = queue.config()
    view = clients.in_flight(config)
    page = view.page(limit, after)
    records = view.records(page)
    rows = [_describe(config, d, records.get((d.partition, d.offset))) for d in page]
    return InFlightPage(view.count(), rows)


def _describe(config: QueueConfig, delivery: InFlight, record: KafkaMessage | None) -> dict:
    """What a page shows of a delivery; its record may be gone (retention)."""
    record_headers = record.headers() if record is not None else None
    stable = h.find(record_headers, h.MESSAGE_ID)
    key = record.key() if record is not None else None
    return {
        "id": stable.decode(errors="replace")
        if stable
        else h.message_id(config.topic, delivery.partition, delivery.offset),
        "partition": delivery.partition,
        "offset": delivery.offset,
        "delivery_count": _delivery_count(record_headers),
        "deadline_ms": delivery.deadline_ms,
        "key": key.decode(errors="replace") if key is not None else None,
    }


def _delivery_count(record_headers: list | None) -> int:
    """As QueueClient counts: a malformed count is taken for a first delivery."""
    try:
        count = h.find(record_headers, h.REDELIVERY_COUNT)
        return (h.decode_count(count) if count else 0) + 1
    except h.HeaderError:
        return 1
