"""An audit entry's before and after as a table of changes a person reads.

Entries store whatever JSON the action had to hand: a dict of fields (most),
a dict nested in a dict (a queue's settings), a list, a bare value, or
nothing. Dicts are walked into dotted field names, so a nested change shows
where it is; anything else is one field, named after the entry's target.
"""

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

# Shown for a side that has no such field: the action added or removed it.
ABSENT = "—"
# An int this large in a field named *_ms is a time (2001 on), not a length.
EPOCH_MS_FROM = 10**12
BLANK = "(blank)"  # an empty text, which would look like nothing at all
_MISSING = object()


@dataclass(frozen=True)
class Change:
    field: str
    before: str
    after: str
    changed: bool


def changes(before: Any, after: Any) -> list[Change]:
    """One row per field of either side, in the order the entry lists them."""
    rows: list[Change] = []
    _walk("", _or_missing(before), _or_missing(after), rows)
    return rows


def acted_on(before: Any) -> list[tuple[str, str]]:
    """(field, value) of what an action acted on without changing its
    fields (an ack names a delivery, a fire a schedule): the page shows them
    as what the action was about, not as fields deleted."""
    return [(c.field, c.before) for c in changes(before, before)]


def _or_missing(value: Any) -> Any:
    return _MISSING if value is None else value


def _walk(path: str, before: Any, after: Any, rows: list[Change]) -> None:
    if _is_fields(before) and _is_fields(after):
        olds = before if isinstance(before, dict) else {}
        news = after if isinstance(after, dict) else {}
        for key in [*olds, *(k for k in news if k not in olds)]:
            name = f"{path}.{key}" if path else str(key)
            _walk(name, olds.get(key, _MISSING), news.get(key, _MISSING), rows)
        return
    name = path or "value"
    rows.append(Change(name, _shown(before, name), _shown(after, name), before != after))


def _is_fields(value: Any) -> bool:
    return value is _MISSING or isinstance(value, dict)


def _shown(value: Any, name: str) -> str:
    """Text as is, an epoch-ms time as a UTC time, a list of plain values
    comma-separated, JSON otherwise."""
    if value is _MISSING:
        return ABSENT
    if name.endswith("_ms") and type(value) is int and value >= EPOCH_MS_FROM:
        try:
            return f"{datetime.fromtimestamp(value / 1000, UTC):%Y-%m-%d %H:%M:%S} UTC"
        except (OverflowError, OSError, ValueError):
            return str(value)  # past any datetime: the number says it
    if isinstance(value, str):
        return value or BLANK
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return ", ".join(map(str, value)) if value else "(none)"
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
