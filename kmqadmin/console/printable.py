"""Text any database takes and any reader sees whole: control characters escaped.

Audit entries hold producer-controlled text (kmq-ids, schedule ids, header
values). PostgreSQL refuses NUL in text and ``\\u0000`` in jsonb, and a lone
surrogate cannot be encoded at all: written raw, one such character would
fail the insert after the Kafka effect, or forge a line in a rendered log.
"""

import re
from typing import Any

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with each C0/C1 control character and lone surrogate written
    as its escape (``\\x00``, ``\\ud800``)."""
    return _UNPRINTABLE.sub(_escaped, text)


def printable_json(value: Any) -> Any:
    """A JSON-able value with every string in it, keys included, printable."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable_json(k): printable_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [printable_json(v) for v in value]
    return value
