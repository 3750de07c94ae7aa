"""Which records a person browsing a topic wants to see.

Every field given must hold; none given matches every record. The JSONPath
expression is compiled once, when the filter is built, so a bad one is a
FilterError the request answers with a 400, not an error per record. It
runs on python-jsonpath (RFC 9535): a payload matches when the expression
selects at least one node of it. A filter right after the root also tests
the root itself, as Jayway's JsonPath (which most Kafka tools use) does, so
``$[?@.status == 'failed']`` finds ``{"status": "failed"}``; under RFC 9535
alone it tests only the root's children and would find nothing. A payload
that is not JSON, or not UTF-8, does not match a JSONPath filter; it is
never an error.
"""

from dataclasses import dataclass

import jsonpath
from confluent_kafka import Message as KafkaMessage
from jsonpath.segments import JSONPathChildSegment
from jsonpath.selectors import Filter

from kmqadmin.kafka.client import json_payload
from kmqadmin.kafka.client.record import UndecodableRecord
from kmqadmin.kafka.client.record import headers as read_headers
from kmqadmin.kafka.inspect.json_paths import JsonPath, RuleError, compiled


class FilterError(RuleError):
    """A filter that cannot be used as given; the message says why, ``part``
    which of the filters ("header", "json_path")."""


@dataclass(frozen=True)
class RecordFilter:
    key: bytes | None = None  # the key contains it
    header: str | None = None  # a header of this name exists...
    header_value: bytes | None = None  # ...with exactly this value
    contains: bytes | None = None  # the payload contains it
    json_path: JsonPath | None = None

    @classmethod
    def build(
        cls,
        key: str = "",
        header: str = "",
        contains: str = "",
        json_path: str = "",
    ) -> "RecordFilter":
        """From the text a person typed; blank means no filter on that.
        ``header`` is ``name`` or ``name=value``."""
        name, equals, value = header.partition("=")
        if equals and not name:
            raise FilterError("header", "a header name is needed before '='")
        return cls(
            key=key.encode() or None,
            header=name or None,
            header_value=value.encode() if equals else None,
            contains=contains.encode() or None,
            json_path=compiled(json_path, FilterError, "json_path") if json_path else None,
        )

    @property
    def empty(self) -> bool:
        return self == RecordFilter()

    def __call__(self, record: KafkaMessage) -> bool:
        """Cheapest test first: byte searches, then headers, then JSON."""
        if self.key is not None and self.key not in (record.key() or b""):
            return False
        value = record.value()
        if self.contains is not None and self.contains not in (value or b""):
            return False
        if self.header is not None and not self._has_header(record):
            return False
        return self.json_path is None or _selects(self.json_path, value)

    def _has_header(self, record: KafkaMessage) -> bool:
        try:
            found = read_headers(record) or []
        except UndecodableRecord:  # no name can be read, so none matches
            return False
        return any(
            name == self.header and (self.header_value is None or data == self.header_value)
            for name, data in found
        )


def _selects(path: JsonPath, value: bytes | None) -> bool:
    if not value:
        return False
    try:
        document = json_payload.loads(value)
    except ValueError:  # not JSON, not UTF-8, or nested past Python's stack
        return False
    try:
        if path.match(document) is not None:
            return True
        return _filters_root(path) and path.match([document]) is not None
    except jsonpath.JSONPathError:  # e.g. a type error a filter meets at run time
        return False


def _filters_root(path: JsonPath) -> bool:
    """``$[?...]...``: the first segment is a child segment of filters only."""
    segments = getattr(path, "segments", ())  # a compound path (a | b) has none
    if not segments or not isinstance(segments[0], JSONPathChildSegment):
        return False
    return all(isinstance(selector, Filter) for selector in segments[0].selectors)
