"""The ways the message view can show one browsed record.

``renderings(record, source)`` asks every renderer in RENDERERS, in order,
and returns what they gave: the first is shown by default. For an audience
the topic's queue masks (``source.masking``) every renderer is handed the
masked record, but the schema's: it decodes the clear bytes (a masked
payload is no longer framed) and masks what it decoded. A new way of
showing records is one more function in RENDERERS; neither the view nor the
template changes. A renderer that does
not apply returns None; one that applies but cannot decode the record
returns a Rendering with ``error`` set and the raw bytes as its text, so the
page shows why next to what is there.
"""

from collections.abc import Callable
from dataclasses import dataclass

from kmqadmin.console.models import Cluster
from kmqadmin.console.services.browsing.schema_rendering import schema_rendering
from kmqadmin.console.services.clusters.topic_kinds import Kind
from kmqadmin.console.templatetags.kmq import SHOWN_BYTES, hexdump
from kmqadmin.kafka.client import json_payload
from kmqadmin.kafka.client.clock import utc_text
from kmqadmin.kafka.inspect.browse import BrowsedRecord
from kmqadmin.kafka.inspect.payload_masking import MaskRules
from kmqadmin.kafka.inspect.schema_decoding import NOT_FRAMED
from kmqadmin.kmq import markers
from kmqadmin.scheduler import wire


@dataclass(frozen=True)
class Rendering:
    name: str  # a slug, used in the page's ?as=
    label: str
    text: str
    error: str = ""  # why it could not decode the record; ``text`` is then raw


@dataclass(frozen=True)
class Source:
    """Where a record was read: what its topic is, on which cluster."""

    kind: Kind
    cluster: Cluster
    masking: MaskRules | None = None  # the rules of a masked audience


Renderer = Callable[[BrowsedRecord, Source], Rendering | None]


def by_schema(record: BrowsedRecord, source: Source) -> Rendering | None:
    """The payload as its writer schema reads it, for a cluster with a schema
    registry; a framed payload that does not decode says why, over its raw
    bytes. An unframed one is left to the other renderings."""
    if source.kind in (Kind.MARKERS, Kind.SCHEDULES):
        return None
    shown = schema_rendering(source.cluster, record.value, record.key, source.masking)
    if shown is None or shown.value.fallback == NOT_FRAMED:
        return None
    if not shown.value.ok:
        return _undecoded("schema", "Schema", record, shown.label)
    key = f"key ({shown.key.schema_type}):\n{shown.key_text}\n\nvalue:\n" if shown.key_text else ""
    return Rendering("schema", shown.label, key + shown.text)


def marker(record: BrowsedRecord, source: Source) -> Rendering | None:
    """A kmq marker: which queue record it is about, and what it says."""
    if source.kind is not Kind.MARKERS:
        return None
    try:
        found = markers.decode(record.key, record.value, record.timestamp_ms or 0)
        what, first, last = found.kind, found.first, found.last
        about = f"record: partition {found.partition}, offset {first}"
        if first != last:
            about = f"records: partition {found.partition}, offsets {first} to {last}"
        lines = [f"queue {about}", f"marker: {what.name}"]
        if what in (markers.MarkerType.START, markers.MarkerType.EXTEND):
            lines.append(f"redeliver at: {utc_text(found.deadline)}")
        elif found.reason:
            lines.append(f"reason: {found.reason.decode(errors='replace')}")
    except markers.MarkerError as exc:
        return _undecoded("marker", "Marker", record, f"not a kmq marker: {exc}")
    return Rendering("marker", "Marker", "\n".join(lines))


def schedule(record: BrowsedRecord, source: Source) -> Rendering | None:
    """A schedule record: when it fires, where to, or that it cancels one."""
    if source.kind is not Kind.SCHEDULES:
        return None
    schedule_id = _text(record.key)
    if record.headers is None:
        return _undecoded(
            "schedule", "Schedule", record, "headers undecodable (a name is not UTF-8)"
        )
    if record.value is None:
        return Rendering("schedule", "Schedule", f"tombstone: cancels schedule {schedule_id}")
    found = dict(record.headers)
    try:
        due = wire.deadline(record.headers)
    except wire.ScheduleError as exc:
        return _undecoded("schedule", "Schedule", record, f"not a schedule: {exc}")
    lines = [
        f"schedule: {schedule_id}",
        f"fires at: {utc_text(due)}",
        f"target topic: {_text(found.get(wire.TARGET_TOPIC))}",
        f"target key: {_text(found.get(wire.TARGET_KEY)) or '(none)'}",
    ]
    lines += [f"passes header {name}: {_text(data)}" for name, data in wire.passed(record.headers)]
    return Rendering("schedule", "Schedule", "\n".join(lines))


def as_json(record: BrowsedRecord, source: Source) -> Rendering | None:
    """The payload pretty-printed, when it is JSON."""
    try:
        text = json_payload.pretty(json_payload.loads(record.value or b""))
    except ValueError:
        return None
    return Rendering("json", "JSON", text[:SHOWN_BYTES] + _cut(len(text), "characters"))


def as_text(record: BrowsedRecord, source: Source) -> Rendering | None:
    """The payload as UTF-8 text, when it is."""
    if record.value is None:
        return Rendering("text", "Text", "(null: a tombstone)")
    try:
        text = record.value.decode()
    except UnicodeDecodeError:
        return None
    return Rendering("text", "Text", text[:SHOWN_BYTES] + _cut(len(text), "characters"))


def as_hex(record: BrowsedRecord, source: Source) -> Rendering:
    """Always there: whatever the bytes are."""
    size = 0 if record.value is None else len(record.value)
    return Rendering("hex", "Hex", hexdump(record.value) + _cut(size, "bytes"))


RENDERERS: list[Renderer] = [marker, schedule, by_schema, as_json, as_text, as_hex]
# Renderers that read the clear record and mask what they decode themselves.
MASK_THEIR_OWN: set[Renderer] = {by_schema}


def renderings(record: BrowsedRecord, source: Source) -> list[Rendering]:
    masked = record if source.masking is None else source.masking.browsed(record)
    return [
        found
        for render in RENDERERS
        if (found := render(record if render in MASK_THEIR_OWN else masked, source)) is not None
    ]


def _undecoded(name: str, label: str, record: BrowsedRecord, why: str) -> Rendering:
    raw = f"key:\n{hexdump(record.key)}\n\nvalue:\n{hexdump(record.value)}"
    return Rendering(name, label, raw, error=why)


def _cut(size: int, unit: str) -> str:
    """Says what a page leaves out of a long payload (the hex dump and the
    text show the first SHOWN_BYTES)."""
    return f"\n… {size - SHOWN_BYTES} more {unit} not shown" if size > SHOWN_BYTES else ""


def _text(data: bytes | None) -> str:
    return "" if data is None else data.decode(errors="replace")
