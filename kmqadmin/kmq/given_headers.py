"""What a person or a client may put in a record kmqadmin writes for them:
header names and values, keys and ids, checked before any Kafka call.

librdkafka takes header names as C strings: a name that is not UTF-8
encodable (a lone surrogate) crashes the producing process, and a NUL cuts
it short. kmqadmin's own header prefixes are refused so that no producer can
pose as the tracker or the scheduler.
"""

from collections.abc import Mapping

from kmqadmin.kmq.headers import PREFIX as KMQ_PREFIX
from kmqadmin.scheduler.wire import PREFIX as SCHEDULER_PREFIX

RESERVED_PREFIXES = (KMQ_PREFIX, SCHEDULER_PREFIX)
MAX_HEADERS = 64
MAX_NAME_BYTES = 256
MAX_VALUE_BYTES = 32_768
MAX_TOTAL_BYTES = 65_536
# Keys and schedule ids: Kafka allows more, but nobody reads a longer one.
MAX_TEXT_BYTES = 4096


class BadInput(ValueError):
    """Text that must not reach a producer; the message says why."""


def check_text(text: str, what: str, limit: int = MAX_TEXT_BYTES) -> bytes:
    """``text`` as UTF-8, checked: encodable, without NUL, at most ``limit`` bytes."""
    try:
        data = text.encode()
    except UnicodeEncodeError as exc:
        raise BadInput(f"{what} is not UTF-8 encodable: {exc.reason} at {exc.start}") from None
    if b"\0" in data:
        raise BadInput(f"{what} holds a NUL character")
    if len(data) > limit:
        raise BadInput(f"{what} is {len(data)} bytes; at most {limit}")
    return data


def check_headers(headers: Mapping[str, str]) -> None:
    """Each name and value checked, the count and total size bounded;
    BadInput naming the first one that fails."""
    if len(headers) > MAX_HEADERS:
        raise BadInput(f"{len(headers)} headers; at most {MAX_HEADERS}")
    total = 0
    for name, value in headers.items():
        shown = repr(name[:40])
        if not name:
            raise BadInput("a header name is empty")
        if name.startswith(RESERVED_PREFIXES):
            reserved = " and ".join(f"{p}*" for p in RESERVED_PREFIXES)
            raise BadInput(f"header {shown}: {reserved} headers are kmqadmin's own")
        total += len(check_text(name, f"header name {shown}", MAX_NAME_BYTES))
        total += len(check_text(value, f"header {shown}'s value", MAX_VALUE_BYTES))
    if total > MAX_TOTAL_BYTES:
        raise BadInput(f"headers are {total} bytes in all; at most {MAX_TOTAL_BYTES}")
