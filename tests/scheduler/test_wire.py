"""The etf1 wire format: epochs and the fired record's headers (pure logic)."""

import pytest
from confluent_kafka import Message
from hypothesis import given
from hypothesis import strategies as st

from kmqadmin.scheduler import wire


@given(st.integers(0, 2**42))
def test_epoch_round_trips_in_milliseconds(epoch_ms: int) -> None:
    assert wire.decode_epoch(wire.encode_epoch(epoch_ms)) == epoch_ms


def test_whole_seconds_are_written_as_etf1_writes_them() -> None:
    assert wire.encode_epoch(1_893_456_000_000) == b"1893456000"
    assert wire.encode_epoch(1_893_456_000_250) == b"1893456000.250"


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (None, "no scheduler-epoch header"),
        (b"", "not decimal epoch seconds"),
        (b"tomorrow", "not decimal epoch seconds"),
        (b"\xff\xfe", "not decimal epoch seconds"),
        (b"nan", "not a finite number"),
        (b"inf", "not a finite number"),
        (b"-inf", "not a finite number"),
        (b"1e400", "not a finite number"),
        (b"-1e306", "before the year 1"),  # overflows to -inf in milliseconds
        (b"-1.8e305", "before the year 1"),
        (b"-1e308", "before the year 1"),
        (b"-62135596801", "before the year 1"),
        (b"1e15", "after the year 9999"),  # a producer's, in ms by mistake
        (b"253402300800", "after the year 9999"),
    ],
)
def test_bad_epochs_say_why(data: bytes | None, error: str) -> None:
    with pytest.raises(wire.ScheduleError, match=error):
        wire.decode_epoch(data)


def test_the_last_second_of_9999_is_a_time() -> None:
    assert wire.decode_epoch(b"253402300799") == wire.check_due(253_402_300_799_000)
    with pytest.raises(wire.ScheduleError):
        wire.check_due(253_402_300_799_001)


def test_an_epoch_before_1970_is_due_now() -> None:
    assert wire.decode_epoch(b"-5") == 0
    assert wire.decode_epoch(b"-62135596800") == 0  # 0001-01-01T00:00:00Z


def test_deadline_needs_a_target_topic() -> None:
    with pytest.raises(wire.ScheduleError, match="no scheduler-target-topic"):
        wire.deadline([(wire.EPOCH, b"10")])
    assert wire.deadline([(wire.EPOCH, b"10"), (wire.TARGET_TOPIC, b"t")]) == 10_000


@pytest.mark.parametrize("name", [b"a\x00b", b"a b", b"a/b", b".", b"..", b"t" * 250])
def test_a_target_topic_kafka_would_refuse_is_no_schedule(name: bytes) -> None:
    """Never fired: asking the broker about such a name raises, not answers."""
    headers = [(wire.EPOCH, b"10"), (wire.TARGET_TOPIC, name)]
    with pytest.raises(wire.ScheduleError, match="not a topic name Kafka allows"):
        wire.deadline(headers)
    record = Message(topic="s", key=b"id", value=b"v", headers=headers, timestamp=(1, 0))
    with pytest.raises(wire.ScheduleError, match="not a topic name Kafka allows"):
        wire.target(record, "s")


def test_schedule_headers_put_ours_first_and_pass_the_rest() -> None:
    headers = wire.schedule_headers(5000, "videos", b"vid1", [("trace", b"1"), (wire.EPOCH, b"9")])
    assert headers == [
        (wire.EPOCH, b"5"),
        (wire.TARGET_TOPIC, b"videos"),
        (wire.TARGET_KEY, b"vid1"),
        ("trace", b"1"),
    ]
