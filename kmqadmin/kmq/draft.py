"""A message a person writes by hand (the console's produce form, the API's
enqueue, a reproduce or a redrive with edits): its value given as text, JSON
or base64, a key, headers and a partition, all checked before any Kafka call
so that a bad or oversize one writes nothing and says why."""

import base64
import binascii
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kmqadmin.kafka.admin.message_size import record_bytes
from kmqadmin.kafka.client import json_payload
from kmqadmin.kmq.given_headers import RESERVED_PREFIXES, BadInput, check_headers, check_text
from kmqadmin.kmq.headers import Headers

ENCODINGS = ("utf-8", "json", "base64")
# How much of a changed value an audit entry shows; past it, the sizes only.
SHOWN_VALUE_CHARS = 200


class TooLarge(BadInput):
    """A record over a cap: the message names the size and the limit."""


@dataclass(frozen=True)
class Draft:
    value: bytes
    key: bytes | None = None
    headers: tuple[tuple[str, bytes], ...] = ()
    partition: int | None = None  # None: the partitioner's choice

    def size(self) -> int:
        """What it weighs against the topic's limit (kafka.admin.message_size)."""
        return record_bytes(self.value, self.key, dict(self.headers))

    def header_names(self) -> list[str]:
        return [name for name, _ in self.headers]

    def onto(self, copy_headers: Headers) -> Headers:
        """A copy's headers with its own (the user's) replaced by the draft's:
        kmqadmin's bookkeeping (kmq-id...) is the copy's, the rest the edit's."""
        kept = [(k, v) for k, v in copy_headers if k.startswith(RESERVED_PREFIXES)]
        return kept + list(self.headers)


def decode_value(text: str, encoding: str) -> bytes:
    """The value's bytes: ``text`` as UTF-8, as JSON (checked, sent as
    written), or base64 (checked strictly: a typo is an error, not noise)."""
    if encoding == "base64":
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as exc:  # ValueError: not ASCII
            raise BadInput(f"the value is not base64: {exc}") from None
    if encoding == "json":
        try:
            json_payload.loads(text)
        except ValueError as exc:
            raise BadInput(f"the value is not JSON: {exc}") from None
    elif encoding != "utf-8":
        raise BadInput(f"{encoding!r} is not an encoding: one of {', '.join(ENCODINGS)}")
    try:
        return text.encode()
    except UnicodeEncodeError as exc:
        raise BadInput(f"the value is not UTF-8: {exc.reason}") from None


def header_rows(names: Sequence[str], values: Sequence[str]) -> dict[str, str]:
    """A form's name/value rows as headers; blank rows skipped, a name given
    twice refused (a queue message's header names are one each here)."""
    if len(names) != len(values):
        raise BadInput("every header row needs a name and a value field")
    found: dict[str, str] = {}
    for name, value in zip(names, values, strict=True):
        if not name and not value:
            continue
        if name in found:
            raise BadInput(f"header {name[:40]!r} is given twice")
        found[name] = value
    return found


def draft(
    value: str,
    encoding: str = "utf-8",
    key: str | None = None,
    headers: dict[str, str] | None = None,
    partition: int | None = None,
) -> Draft:
    """A checked Draft; BadInput naming what is wrong."""
    check_headers(headers or {})
    return Draft(
        value=decode_value(value, encoding),
        key=None if key is None else check_text(key, "the key"),
        headers=tuple((name, data.encode()) for name, data in (headers or {}).items()),
        partition=partition,
    )


def check_size(found: Draft, payload_cap: int, record_cap: int) -> None:
    """TooLarge if the value passes ``payload_cap`` (kmqadmin's own,
    KMQ_MAX_PAYLOAD_BYTES) or value, key and headers pass ``record_cap``
    (what the topic takes, kafka.admin.message_size)."""
    if (size := len(found.value)) > payload_cap:
        raise TooLarge(f"the value is {size} bytes; at most {payload_cap} (KMQ_MAX_PAYLOAD_BYTES)")
    if (size := found.size()) > record_cap:
        raise TooLarge(
            f"the record is {size} bytes with key and headers; the topic takes at most {record_cap}"
        )


def of_record(
    key: bytes | None, value: bytes | None, headers: Iterable[tuple[str, bytes | None]]
) -> Draft:
    """A record as a draft to edit: every header but kmqadmin's own, which
    a copy of it gets afresh (Draft.onto)."""
    own = tuple(
        (name, data or b"") for name, data in headers if not name.startswith(RESERVED_PREFIXES)
    )
    _check_text("its key", key)
    for name, data in own:
        _check_text(f"header {name}", data)
    return Draft(value=value or b"", key=key, headers=own)


class NotEditable(ValueError):
    """A record a form cannot show without changing it: its key or a header
    value is not UTF-8 (the value falls back to base64; they have no such
    field). Submitted, the form would write replacement characters."""


def _check_text(what: str, data: bytes | None) -> None:
    try:
        (data or b"").decode()
    except UnicodeDecodeError:
        raise NotEditable(f"{what} is not UTF-8 text, so a form would change it") from None


def text_or_base64(data: bytes | None) -> tuple[str | None, str]:
    """``data`` as text where it is UTF-8, else base64, with which it is
    ("utf-8" or "base64"): how every answer shows a payload's bytes. None
    (no key, a tombstone's value) stays None."""
    if data is None:
        return None, "utf-8"
    try:
        return data.decode(), "utf-8"
    except UnicodeDecodeError:
        return base64.b64encode(data).decode(), "base64"


def as_text(found: Draft) -> dict:
    """A draft as a form shows it: the value as text where it is UTF-8,
    base64 where not; the key and header values as text."""
    value, encoding = text_or_base64(found.value)
    return {
        "value": value,
        "encoding": encoding,
        "key": _shown(found.key),
        "headers": {name: data.decode(errors="replace") for name, data in found.headers},
        "partition": found.partition,
    }


def changes(before: Draft, after: Draft) -> tuple[dict, dict]:
    """What an edit changed, as the audit shows it: (before, after) of the
    key, each header that differs, and the value (its text while short)."""
    old, new = {}, {}
    if before.key != after.key:
        old["key"], new["key"] = _shown(before.key), _shown(after.key)
    was, now = dict(before.headers), dict(after.headers)
    for name in sorted(was.keys() | now.keys()):
        if was.get(name) != now.get(name):
            old[f"header {name}"] = _shown(was.get(name))
            new[f"header {name}"] = _shown(now.get(name))
    if before.value != after.value:
        old["value"], new["value"] = _value(before.value), _value(after.value)
    return old, new


def _shown(data: bytes | None) -> str | None:
    return None if data is None else data.decode(errors="replace")


def _value(data: bytes) -> str:
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return f"{len(data)} bytes, not UTF-8"
    if len(text) > SHOWN_VALUE_CHARS:
        return f"{len(data)} bytes: {text[:SHOWN_VALUE_CHARS]}…"
    return text
