"""Masking a queue's records for people who may not read them in clear.

A queue's rules name JSONPath expressions (python-jsonpath, as the browser's
filter uses), header names, and regular expressions. They are compiled once,
into MaskRules, so a page of a hundred records costs a hundred cheap passes,
not a hundred compilations; a rule that does not compile is a MaskRuleError
naming it, for the form or the API to answer with.

Masking never lets a secret through by way of an encoding: a payload (or,
with patterns, a key) that is not UTF-8 text cannot be searched, so it is
replaced whole with a note, and its hex dump shows only the note. Regular
expressions run on text cut at MAX_TEXT_CHARS (what is past it is hidden),
and a pattern is refused when it is long or nests quantifiers, the usual
shape of catastrophic backtracking: a rule must not stall a page.
"""

import copy
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import jsonpath
from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.client import json_payload
from kmqadmin.kafka.client.record import Headers, UndecodableRecord
from kmqadmin.kafka.client.record import headers as read_headers
from kmqadmin.kafka.inspect.browse import BrowsedRecord, Match
from kmqadmin.kafka.inspect.json_paths import JsonPath, RuleError, compiled

MASK = "***"
HIDDEN = b"*** hidden: not UTF-8 text, and this queue masks its records"
MAX_PATTERN_CHARS = 200
MAX_TEXT_CHARS = 65_536
MAGIC, FRAME_BYTES = b"\x00", 5
# A group holding a quantifier, itself quantified: (a+)+, (\w*)*, (x{2,})+ ...
_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*[*+}]\)\s*[*+{]")


class MaskRuleError(RuleError):
    """A rule that cannot be used; ``part`` says which kind ("json_paths",
    "patterns"), the message which rule and why."""


@dataclass(frozen=True)
class MaskRules:
    json_paths: tuple[JsonPath, ...] = ()
    headers: frozenset[str] = frozenset()  # casefolded names
    patterns: tuple[re.Pattern[str], ...] = ()

    @classmethod
    def build(
        cls,
        json_paths: Iterable[str] = (),
        headers: Iterable[str] = (),
        patterns: Iterable[str] = (),
    ) -> "MaskRules":
        return cls(
            json_paths=tuple(compiled(text, MaskRuleError, "json_paths") for text in json_paths),
            headers=frozenset(name.casefold() for name in headers),
            patterns=tuple(_pattern(text) for text in patterns),
        )

    @property
    def empty(self) -> bool:
        return not (self.json_paths or self.headers or self.patterns)

    def value(self, data: bytes | None) -> bytes | None:
        """JSONPath matches of a JSON payload become "***", then the
        patterns run over the text. A tombstone stays one. With JSONPath
        rules, a payload that is not JSON (nor JSON framed for a schema
        registry) is hidden whole: what they name cannot be found in it,
        and a binary encoding (Avro, Protobuf) may still read as text."""
        if data is None or self.empty:
            return data
        frame, body = _frame(data) if self.json_paths else (b"", data)
        try:
            text = body.decode()
        except UnicodeDecodeError:
            return HIDDEN
        if self.json_paths:
            try:
                text = json.dumps(self.document(json_payload.loads(text)), ensure_ascii=False)
            except (ValueError, RecursionError):  # RecursionError: dumps of what loads took
                return HIDDEN
        return frame + self.text(text).encode()

    def key(self, data: bytes | None) -> bytes | None:
        """The patterns over the key's text."""
        if data is None or not self.patterns:
            return data
        try:
            return self.text(data.decode()).encode()
        except UnicodeDecodeError:
            return HIDDEN

    def header_values(self, found: Headers) -> Headers:
        """A named header's value becomes "***"; the patterns run over the rest."""
        if self.empty:
            return found
        return [(name, self._header_value(name, data)) for name, data in found]

    def raw_header_values(self, found: list[tuple[bytes, bytes | None]]) -> list:
        """Headers read as bytes (their names not UTF-8): as header_values,
        names compared as decoded with replacement characters."""
        if self.empty:
            return found
        return [
            (name, self._header_value(name.decode(errors="replace"), data)) for name, data in found
        ]

    def document(self, document: Any) -> Any:
        """A copy of a decoded payload (JSON, or a schema's reading of one)
        with every JSONPath match replaced by "***"."""
        if not self.json_paths:
            return document
        masked = copy.deepcopy(document)
        for path in self.json_paths:
            masked = _replace_matches(path, masked)
        return masked

    def text(self, text: str) -> str:
        """The patterns over at most MAX_TEXT_CHARS of ``text``."""
        if not self.patterns:
            return text
        cut = len(text) - MAX_TEXT_CHARS
        text = text[:MAX_TEXT_CHARS]
        for pattern in self.patterns:
            text = pattern.sub(MASK, text)
        return text + (f"\n… {cut} more characters hidden by masking" if cut > 0 else "")

    def record(self, found: KafkaMessage) -> KafkaMessage:
        """A masked copy (the original may be cached and shown to others).
        A record whose headers do not decode keeps none in the copy."""
        try:
            kept: Headers | None = self.header_values(read_headers(found) or [])
        except UndecodableRecord:
            kept = None
        return KafkaMessage(
            topic=found.topic(),
            partition=found.partition(),
            offset=found.offset(),
            key=self.key(found.key()),
            value=self.value(found.value()),
            headers=kept,
            timestamp=found.timestamp(),
        )

    def matching(self, match: Match) -> Match:
        """``match`` applied to the masked record: a filter a masked audience
        types must not tell it what the mask hides."""
        return lambda found: match(self.record(found))

    def browsed(self, found: BrowsedRecord) -> BrowsedRecord:
        headers = None if found.headers is None else self.header_values(found.headers)
        return replace(
            found, key=self.key(found.key), value=self.value(found.value), headers=headers
        )

    def _header_value(self, name: str, data: bytes | None) -> bytes | None:
        if name.casefold() in self.headers:
            return MASK.encode()
        return self.key(data)


def _frame(data: bytes) -> tuple[bytes, bytes]:
    """A schema registry's frame (magic byte 0, a 4-byte schema id) and the
    body after it; a JSON Schema payload is JSON text after its frame."""
    if data[:1] == MAGIC and len(data) > FRAME_BYTES:
        return data[:FRAME_BYTES], data[FRAME_BYTES:]
    return b"", data


def _pattern(text: str) -> re.Pattern[str]:
    if len(text) > MAX_PATTERN_CHARS:
        raise MaskRuleError(
            "patterns", f"pattern '{text[:40]}…': over {MAX_PATTERN_CHARS} characters"
        )
    if _NESTED_QUANTIFIER.search(text):
        raise MaskRuleError(
            "patterns",
            f"pattern '{text}': a quantified group holding a quantifier can stall a page",
        )
    try:
        compiled = re.compile(text)
    except re.error as exc:
        raise MaskRuleError("patterns", f"pattern '{text}': {exc}") from None
    if compiled.fullmatch(""):
        raise MaskRuleError("patterns", f"pattern '{text}' matches empty text")
    return compiled


def _replace_matches(path: JsonPath, document: Any) -> Any:
    """Deepest matches first, so a match inside another is set before its
    parent turns into "***"; the root itself matching masks the whole."""
    try:
        found = sorted((m.parts for m in path.finditer(document)), key=len, reverse=True)
    except jsonpath.JSONPathError:  # a filter's type error met at run time
        return MASK
    for parts in found:
        if not parts:
            return MASK
        try:
            parent = document
            for part in parts[:-1]:
                parent = parent[part]
            parent[parts[-1]] = MASK
        except (KeyError, IndexError, TypeError):  # a match that is no place (a key name)
            return MASK
    return document
