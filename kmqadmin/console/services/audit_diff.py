"""An audit entry's before and after as a table of changes a person reads.

Entries store whatever JSON the action had to hand: a dict of fields (most),
a dict nested in a dict (a queue's settings), a list, a bare value, or
nothing. Dicts are walked into dotted field names, so a nested change shows
where it is; anything else is one field, named after the entry's target.
"""

import json
from dataclasses import dataclass
from typing import Any

# Shown for a side that has no such field: the action added or removed it.
ABSENT = "—"
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
    rows.append(Change(path or "value", _shown(before), _shown(after), before != after))


def _is_fields(value: Any) -> bool:
    return value is _MISSING or isinstance(value, dict)


def _shown(value: Any) -> str:
    """Text as is, a list of plain values comma-separated, JSON otherwise."""
    if value is _MISSING:
        return ABSENT
    if isinstance(value, str):
        return value or BLANK
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return ", ".join(map(str, value)) if value else "(none)"
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
