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


@pytest.mark.parametrize(
    "text", ["²:1", "٣:1", " 1:1", "+1:1", "1_0:1", "2147483648:0", "0:9223372036854775808"]
)
def test_in_flight_cursors_are_ascii_digits_within_kafkas_bounds(text: str) -> None:
    with pytest.raises(cursors.BadCursor):
        cursors.in_flight_after(text)
    assert cursors.in_flight_after("2147483647:9223372036854775807") == (2**31 - 1, 2**63 - 1)


@pytest.mark.parametrize("text", ["²:x", "9" * 5000 + ":x", "9223372036854775808:x"])
def test_schedule_cursor_dues_are_bounded_ascii_digits(text: str) -> None:
    with pytest.raises(cursors.BadCursor):
        cursors.schedule_after(text)
