"""Pages of a queue's in-flight deliveries, as the console and the API show them."""

import threading
from collections import OrderedDict
from dataclasses import dataclass

from confluent_kafka import Message as KafkaMessage

from kmqadmin.console.models import Queue
from kmqadmin.console.services.clusters import clients
from kmqadmin.console.services.queues.share_limits import NO_DEADLINES, refuse_share
from kmqadmin.kafka.client.record import UndecodableRecord, hexed
from kmqadmin.kafka.client.record import headers as read_headers
from kmqadmin.kafka.inspect.payload_masking import HIDDEN, MaskRules
from kmqadmin.kmq import InFlight, QueueConfig
from kmqadmin.kmq import headers as h


@dataclass(frozen=True)
class InFlightPage:
    count: int  # messages in flight in all
    rows: list[dict]


# Fields read from records, by (cluster, topic, partition, offset): a record never
# changes, and a live page re-renders every second, so each is read once.
_described: OrderedDict[tuple[str, str, int, int], dict] = OrderedDict()
_described_lock = threading.Lock()
DESCRIBED_MAX = 20_000


def in_flight_page(
    queue: Queue,
    limit: int,
    after: tuple[int, int] | None = None,
    masking: MaskRules | None = None,
) -> InFlightPage:
    """Up to ``limit`` deliveries after the cursor, with the few fields read
    from their records: those not seen before, in one read per partition.
    A share queue has none to show (NotForShareQueues says why). The fields
    are kept clear; ``masking`` masks the page's copy of them."""
    refuse_share(queue, NO_DEADLINES)
    config = queue.config()
    view = clients.in_flight(config)
    page = view.page(limit, after)
    with _described_lock:
        known = {
            (d.partition, d.offset): _described.get(
                (config.bootstrap_servers, config.topic, d.partition, d.offset)
            )
            for d in page
        }
    missing = [d for d in page if known[(d.partition, d.offset)] is None]
    records = view.records(missing) if missing else {}
    rows = []
    for d in page:
        fields = known[(d.partition, d.offset)]
        if fields is None:
            fields = _remember(config, d, records.get((d.partition, d.offset)))
        shown = fields if masking is None else _masked(fields, masking)
        rows.append(
            {**shown, "partition": d.partition, "offset": d.offset, "deadline_ms": d.deadline_ms}
        )
    return InFlightPage(view.count(), rows)


def _masked(fields: dict, masking: MaskRules) -> dict:
    """The key is the one field of a record's content a row shows."""
    key = fields["key"]
    if key is None or not masking.patterns:
        return fields
    if fields.get("undecodable") or "\ufffd" in key:  # hex, or bytes not UTF-8
        return {**fields, "key": HIDDEN.decode()}
    return {**fields, "key": masking.text(key)}


def _remember(config: QueueConfig, delivery: InFlight, record: KafkaMessage | None) -> dict:
    fields = _describe(config, delivery, record)
    if record is not None:  # a record not read (yet) may be read next time
        with _described_lock:
            _described[
                (config.bootstrap_servers, config.topic, delivery.partition, delivery.offset)
            ] = fields
            while len(_described) > DESCRIBED_MAX:
                _described.popitem(last=False)
    return fields


def _describe(config: QueueConfig, delivery: InFlight, record: KafkaMessage | None) -> dict:
    """What a page shows of a delivery's record; it may be gone (retention).
    One whose headers do not decode shows as undecodable, its key in hex."""
    try:
        record_headers = read_headers(record) if record is not None else None
    except UndecodableRecord as exc:
        return {
            "id": exc.coordinates,
            "delivery_count": 1,
            "key": hexed(exc.key),
            "undecodable": True,
        }
    stable = h.stable_id(record_headers, config.topic, delivery.partition, delivery.offset)
    key = record.key() if record is not None else None
    return {
        "id": stable.decode(errors="replace"),
        "delivery_count": _delivery_count(record_headers),
        "key": key.decode(errors="replace") if key is not None else None,
    }


def _delivery_count(record_headers: list | None) -> int:
    """As QueueClient counts: a malformed count is taken for a first delivery."""
    try:
        count = h.find(record_headers, h.REDELIVERY_COUNT)
        return (h.decode_count(count) if count else 0) + 1
    except h.HeaderError:
        return 1
