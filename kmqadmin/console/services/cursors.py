"""Page cursors as they travel in ``?after=`` and a page's ``next``.

The cores page by a sort key (kmq.InFlightView.page by (partition, offset),
scheduler.UpcomingView.page by (due ms, id)); the console and the API hand
that key to the browser or client as text and read it back. Both ends of
that text live here, so a page's ``next`` is always a valid ``after``.
"""

from kmqadmin.console.services.coordinates import MAX_OFFSET, MAX_PARTITION, number
from kmqadmin.scheduler import Upcoming

SEPARATOR = ":"
IN_FLIGHT_FORM = "PARTITION:OFFSET, e.g. 2:1500"
SCHEDULE_FORM = "DUE_MS:ID, as in a page's next"


class BadCursor(ValueError):
    """Text that is no cursor; the message says what one looks like."""


def in_flight_cursor(partition: int, offset: int) -> str:
    """The cursor of a page whose last delivery is at (partition, offset)."""
    return f"{partition}{SEPARATOR}{offset}"


def in_flight_after(text: str | None) -> tuple[int, int] | None:
    """(partition, offset) of an in-flight cursor; None for no cursor."""
    if not text:
        return None
    try:
        partition, offset = text.split(SEPARATOR)
        return number(partition, MAX_PARTITION), number(offset, MAX_OFFSET)
    except ValueError:
        raise BadCursor(f"expected {IN_FLIGHT_FORM}") from None


def schedule_cursor(last: Upcoming) -> str:
    """The cursor of a page whose last schedule is ``last``."""
    return f"{last.due_ms}{SEPARATOR}{last.id}"


def schedule_after(text: str | None) -> tuple[int, str] | None:
    """(due ms, id) of a schedule cursor; None for no cursor. Ids may hold the
    separator too: only the first one splits."""
    if not text:
        return None
    due, sep, schedule_id = text.partition(SEPARATOR)
    try:
        if sep:
            return number(due, MAX_OFFSET), schedule_id
    except ValueError:
        pass
    raise BadCursor(f"expected {SCHEDULE_FORM}")
