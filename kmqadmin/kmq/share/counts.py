"""Per-minute acknowledgement counts of a share queue's clients.

A share group's broker keeps the records' states, not how many were accepted,
released or rejected a minute ago; a chart needs that. Each ShareQueueClient
tallies in memory (a few integer additions per batch) and, once a minute has
passed, writes one record to the queue's counts topic:

    key:   the client's id (bytes): its share-group member id where it has one
    value: JSON {"minute": <epoch ms, start of the minute>, "accepted": n,
           "released": n, "rejected": n, "dead_lettered": n, "delayed": n,
           "acquired": n, "refused": n, "expired": n, "in_flight": n}

Readers sum the records per minute, across clients, and keep each client's
latest for the console's per-consumer table. Records written before the last
four fields existed read them as 0.
"""

import json
from dataclasses import asdict, dataclass, fields

from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.client import json_payload
from kmqadmin.kafka.client.clock import LAST_MS

MINUTE_MS = 60_000


@dataclass(slots=True)
class ShareCounts:
    """What one client (or, summed, all of them) did in one minute.

    ``rejected`` counts the worker's rejections, ``dead_lettered`` every move
    to the DLQ (rejections and records over the delivery limit), ``delayed``
    the releases that went through the scheduler as delayed copies.
    ``acquired`` counts the records the client acquired, ``refused`` the
    acknowledgements the broker refused, ``expired`` those the client found
    too late to send (the lock had run out); ``in_flight`` is a gauge: what
    the client held, acquired and unacknowledged, when it wrote the record.
    """

    minute: int
    accepted: int = 0
    released: int = 0
    rejected: int = 0
    dead_lettered: int = 0
    delayed: int = 0
    acquired: int = 0
    refused: int = 0
    expired: int = 0
    in_flight: int = 0

    def any(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self) if f.name != "minute")

    def add(self, other: "ShareCounts") -> None:
        for f in fields(self):
            if f.name != "minute":
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def encode(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode()


class BadCounts(ValueError):
    """A counts record that is not ours: counted and skipped by readers."""


_NAMES = frozenset(f.name for f in fields(ShareCounts))


def decode(record: KafkaMessage) -> ShareCounts:
    """The counts a record holds; BadCounts when any producer wrote junk."""
    try:
        data = json_payload.loads(record.value() or b"")
    except ValueError as exc:
        raise BadCounts(f"not JSON: {exc}") from None
    if not isinstance(data, dict) or "minute" not in data:
        raise BadCounts("not an object with a minute")
    values = {k: v for k, v in data.items() if k in _NAMES}
    if not all(type(v) is int and 0 <= v < 2**63 for v in values.values()):
        raise BadCounts("counts must be non-negative integers")
    if values["minute"] > LAST_MS:  # the pipeline's rule too (pipeline/events.py)
        raise BadCounts(f"minute {values['minute']} is after the year 9999")
    return ShareCounts(**values)


def minute_of(ms: int) -> int:
    return ms - ms % MINUTE_MS
