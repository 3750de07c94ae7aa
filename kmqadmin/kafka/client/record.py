"""Reading a consumed record's headers: the one way every service and view does it.

confluent-kafka (2.16.1) cannot decode a header whose *name* is not valid
UTF-8, which any C, Go or kcat producer can write: the first
``Message.headers()`` raises SystemError, and keeps a list holding a NULL in
the Message, which a second call hands out and touching it segfaults.
Worse, the SystemError comes from the interpreter's check of a C call's
result, which CPython 3.11+ skips once it has specialised a hot
``record.headers()`` call site: there the first call already returns the
broken list (with the error left pending, to surface at a random later
call), and the first look at a name segfaults.

So nothing in kmqadmin calls ``headers()`` but ``headers()`` here. It calls
through ``operator.methodcaller``, a generic call that the interpreter
always checks; on the SystemError it replaces the broken list with a
harmless marker (``set_headers`` frees the old one safely) and raises
UndecodableRecord, now and on every later read of the same Message, so the
caller treats the record as malformed (counted, logged with its coordinates,
moved aside) and never sees a pointer to NULL.
"""

from operator import methodcaller

from confluent_kafka import Message

Headers = list[tuple[str, bytes | None]]

# The reason a moved-aside record carries (kmq-dlq-reason, a skipped schedule).
UNDECODABLE = "undecodable"


class _Repaired(tuple):
    """What a repaired Message holds instead of its broken header list: empty,
    so even a stray direct ``headers()`` call finds nothing to crash on."""

    __slots__ = ()


_REPAIRED = _Repaired()
_read = methodcaller("headers")


class UndecodableRecord(ValueError):
    """A record whose headers cannot be decoded; its coordinates and bytes
    are kept so it can be logged, shown and dead-lettered."""

    def __init__(self, record: Message) -> None:
        self.topic: str = record.topic() or ""
        self.partition: int = record.partition() or 0
        self.offset: int = record.offset() or 0
        self.key: bytes | None = record.key()
        self.value: bytes | None = record.value()
        self.timestamp: int = record.timestamp()[1]
        super().__init__(f"{self.coordinates}: headers undecodable (a header name is not UTF-8)")

    @property
    def coordinates(self) -> str:
        return f"{self.topic}/{self.partition}/{self.offset}"


def headers(record: Message) -> Headers | None:
    """``record.headers()``, or UndecodableRecord. Cheap on the hot path: one
    call and one identity test."""
    try:
        found = _read(record)
    except SystemError:
        record.set_headers(_REPAIRED)
        raise UndecodableRecord(record) from None
    if found is _REPAIRED:
        raise UndecodableRecord(record)
    return found


def mark_undecodable(record: Message) -> None:
    """Makes every later ``headers()`` of a record raise UndecodableRecord:
    for a record whose headers a decoder of our own could not read, so it
    takes the same way aside as one librdkafka could not."""
    record.set_headers(_REPAIRED)


def hexed(data: bytes | None, limit: int = 1024) -> str | None:
    """Bytes as spaced hex for a page or the API, the first ``limit`` of them."""
    if data is None:
        return None
    more = f" … ({len(data)} bytes)" if len(data) > limit else ""
    return data[:limit].hex(" ") + more
