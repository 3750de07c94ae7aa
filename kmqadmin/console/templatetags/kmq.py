"""Template filters for Kafka's shapes: epoch milliseconds, deadlines, payloads."""

import string
from datetime import UTC, datetime

from django import template

from kmqadmin.console import durations
from kmqadmin.console.models.clusters import cluster_query
from kmqadmin.kafka.client import json_payload
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kmq import markers
from kmqadmin.kmq.names import markers_topic

register = template.Library()

# Payloads longer than this are cut on the page (the API gives them whole).
SHOWN_BYTES = 16_384
_PRINTABLE = frozenset(string.printable)
MARKERS_SUFFIX = markers_topic("")


@register.filter
def ms_datetime(ms: int | None) -> datetime | None:
    """None for no time, and for one no datetime holds (a deadline in the
    year 300000): the page shows the humanised distance instead."""
    if not ms:
        return None
    try:
        return datetime.fromtimestamp(ms / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None


@register.filter
def countdown(deadline_ms: int) -> str:
    """'due' once passed (0 is a retry or reject asked for), else 'in 12 s'."""
    left = deadline_ms - now_ms() if deadline_ms else -1
    return "due" if left < 0 else durations.relative(left)


@register.filter
def age(ms: int | None) -> str:
    return "—" if ms is None else durations.duration(ms)


@register.filter
def duration(ms: int | None) -> str:
    """A configured length in milliseconds (a timeout, a backoff)."""
    return "none" if ms is None else durations.duration(ms)


@register.filter
def payload(value: bytes | None) -> dict:
    """How to show a payload: JSON pretty-printed, text as is, else hex."""
    if value is None:
        return {"kind": "null", "text": "(null)"}
    data = value[:SHOWN_BYTES]
    cut = len(value) - len(data)
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return {"kind": "hex", "text": _hex(data), "cut": cut}
    try:
        return {"kind": "json", "text": json_payload.pretty(json_payload.loads(text)), "cut": cut}
    except ValueError:
        pass
    if all(c in _PRINTABLE or c.isprintable() for c in text):
        return {"kind": "text", "text": text, "cut": cut}
    return {"kind": "hex", "text": _hex(data), "cut": cut}


@register.filter
def cell(data: bytes | None) -> str:
    """A key or value in a table cell: the text when the bytes are printable
    UTF-8, else ``0x`` and their hex. A packed marker key or an Avro body
    decoded with replacement would show as a row of glyph boxes."""
    if data is None:
        return ""
    try:
        decoded = data.decode()
    except UnicodeDecodeError:
        return "0x" + data.hex()
    if all(c in _PRINTABLE or c.isprintable() for c in decoded):
        return decoded
    return "0x" + data.hex()


@register.filter
def marker(record: object) -> str | None:
    """What a record of a kmq markers topic says ("start of orders/2/17, due
    2026-11-27 10:00:00 UTC"); None when it is not one (any topic's record
    may be browsed, and a markers topic may hold garbage)."""
    topic = getattr(record, "topic", "")
    if not topic.endswith(MARKERS_SUFFIX):
        return None
    try:
        found = markers.decode(record.key, record.value, record.timestamp_ms or 0)
    except markers.MarkerError:
        return None
    of = f"{topic.removesuffix(MARKERS_SUFFIX)}/{found.partition}/{found.first}"
    if found.last != found.first:
        of += f" to {found.last}"
    kind = found.kind
    if kind is markers.MarkerType.START:
        return f"start of {of}, due {_utc(found.deadline)}"
    if kind is markers.MarkerType.EXTEND:
        return f"extend {of} to {_utc(found.deadline)}"
    if kind is markers.MarkerType.REJECT:
        return f"reject {of}: {found.reason.decode(errors='replace')}"
    if kind is markers.MarkerType.END:
        return f"end (ack) of {of}"
    return f"redeliver now {of}"


def _utc(ms: int) -> str:
    at = ms_datetime(ms)
    return f"{at:%Y-%m-%d %H:%M:%S} UTC" if at is not None else f"epoch ms {ms}"


@register.filter
def hexdump(data: bytes | None) -> str:
    """Bytes as a hex dump whatever they hold (a record whose headers do not decode)."""
    return "(null)" if data is None else _hex(data[:SHOWN_BYTES])


def _hex(data: bytes) -> str:
    """16 bytes a line: offset, hex, printable ASCII."""
    lines = []
    for at in range(0, len(data), 16):
        chunk = data[at : at + 16]
        ascii_ = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{at:08x}  {chunk.hex(' '):<47}  {ascii_}")
    return "\n".join(lines)


@register.filter
def on_cluster(registration: object) -> str:
    """``cluster=<name>`` of a queue or schedules topic, for a link to it to
    stay right when another cluster registers the same topic."""
    return cluster_query(registration)
