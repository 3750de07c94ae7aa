"""Epoch milliseconds, the unit of every deadline on the wire, and the one
place seconds and milliseconds are turned into each other.

Every place that needs "now" or turns a time into epoch ms asks here, so
the rounding and the refusal of naive datetimes are the same everywhere.
Kafka's settings and requests count milliseconds, Python's clocks and waits
seconds: to_ms and to_s cross between them, for durations as for times.
"""

import time
from datetime import UTC, datetime

# A point in time as callers give it: an aware datetime, or epoch seconds.
When = datetime | int | float
# The last millisecond a datetime holds (9999-12-31T23:59:59.999Z): a later
# time on the wire is a producer's mistake (1e15), and no page could show it.
LAST_MS = 253_402_300_799_999


def now_ms() -> int:
    """Truncated, never rounded up: "now" is never a moment ahead."""
    return int(time.time() * 1000)


def to_ms(seconds: float) -> int:
    """Seconds (a duration, or epoch seconds) as whole milliseconds, rounded."""
    return round(seconds * 1000)


def to_s(ms: float) -> float:
    """Milliseconds (a duration, or epoch ms) as seconds."""
    return ms / 1000


def epoch_ms(at: When) -> int:
    """Epoch milliseconds of an aware datetime or of epoch seconds.

    A naive datetime is refused: guessing its zone would move the schedule.
    """
    if isinstance(at, datetime):
        if at.tzinfo is None:
            raise ValueError("at must be timezone-aware (e.g. datetime.now(UTC))")
        return to_ms(at.timestamp())
    return to_ms(at)


def utc_text(ms: int) -> str:
    """An epoch-ms time in UTC for people, with spaces a narrow table cell can
    wrap at; a time no datetime holds (a hostile record's int64, say) is
    shown as its number, not raised."""
    try:
        at = datetime.fromtimestamp(to_s(ms), UTC)
    except (OverflowError, ValueError, OSError):
        return f"epoch ms {ms} (not a date)"
    return f"{at:%Y-%m-%d %H:%M:%S}.{ms % 1000:03d} UTC"
