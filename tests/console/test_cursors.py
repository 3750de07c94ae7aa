"""Page cursors: a page's next is always a valid after, and bad text is refused."""

import pytest

from kmqadmin.console.services import cursors
from kmqadmin.scheduler import Upcoming


def test_an_in_flight_cursor_reads_back_as_its_key() -> None:
    assert cursors.in_flight_after(cursors.in_flight_cursor(2, 1500)) == (2, 1500)
    assert cursors.in_flight_after("") is None and cursors.in_flight_after(None) is None


def test_a_schedule_cursor_keeps_separators_in_the_id() -> None:
    last = Upcoming(id="kmq-retry/q/0/7:1", due_ms=1700, target_topic="t", partition=0, offset=3)
    assert cursors.schedule_after(cursors.schedule_cursor(last)) == (1700, "kmq-retry/q/0/7:1")


@pytest.mark.parametrize("text", ["2", "a:1", "1:2:3"])
def test_bad_in_flight_cursors_say_what_one_looks_like(text: str) -> None:
    with pytest.raises(cursors.BadCursor, match="PARTITION:OFFSET"):
        cursors.in_flight_after(text)


@pytest.mark.parametrize("text", ["17", "soon:x", "-1:x"])
def test_bad_schedule_cursors_say_what_one_looks_like(text: str) -> None:
    with pytest.raises(cursors.BadCursor, match="DUE_MS:ID"):
        cursors.schedule_after(text)
