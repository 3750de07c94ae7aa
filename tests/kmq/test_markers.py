"""The marker codec, byte for byte as SoftwareMill kmq writes it, and the
tracker's hot-path decoder proven to agree with it."""

import contextlib
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kmqadmin.kmq import headers, markers
from kmqadmin.kmq.markers import MarkerError, MarkerType
from kmqadmin.kmq.tracking.tracked_partition import TrackedPartition, apply_batch
from tests.consumed_record import ConsumedRecord
from tests.kmq.marker_records import snapshot

INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)


def test_kmq_vectors() -> None:
    # kmq MarkerKey(partition=3, offset=258): int32 BE + int64 BE
    assert markers.encode_key(3, 258) == bytes.fromhex("000000030000000000000102")
    # KmqClient's StartMarker(msgTimeoutMs=30000): 0x01 + int64 BE, the timeout
    assert markers.start(30_000) == bytes.fromhex("010000000000007530")
    assert markers.END == b"\x00"
    start = markers.decode(markers.encode_key(3, 258), markers.start(30_000), 1_000)
    assert start == markers.Marker(MarkerType.START, 3, 258, 258, 31_000, b"")
    end = markers.decode(markers.encode_key(3, 258), b"\x00", 1_000)
    assert end == markers.Marker(MarkerType.END, 3, 258, 258, 0, b"")


def test_compact_range_vectors() -> None:
    """Byte for byte as docs/wire.md gives them."""
    assert markers.start_range(30_000, 757) == bytes.fromhex("05000000000000753000000000000002f5")
    assert markers.end_range(757) == bytes.fromhex("0600000000000002f5")
    key = markers.encode_key(3, 258)
    assert markers.decode(key, markers.start_range(30_000, 757), 1_000) == markers.Marker(
        MarkerType.START, 3, 258, 757, 31_000, b""
    )
    assert markers.decode(key, markers.end_range(757), 1_000) == markers.Marker(
        MarkerType.END, 3, 258, 757, 0, b""
    )


def test_start_deadline_counts_kmqs_timeout_from_the_marker_timestamp() -> None:
    # kmq's tracker: marker timestamp + redeliverAfter
    assert markers.start_deadline(30_000, 1_700_000_000_000) == 1_700_000_030_000
    assert markers.start_deadline(0, 1_700_000_000_000) == 1_700_000_000_000
    # what kmqadmin wrote before: an epoch-ms deadline, read as such
    assert markers.start_deadline(1_700_000_030_000, 1_700_000_000_000) == 1_700_000_030_000
    assert markers.start_deadline(markers.ABSOLUTE_FROM, 5) == markers.ABSOLUTE_FROM
    assert markers.start_deadline(markers.ABSOLUTE_FROM - 1, 5) == markers.ABSOLUTE_FROM + 4


@given(INT32, INT64)
def test_key_round_trip(partition: int, offset: int) -> None:
    data = markers.encode_key(partition, offset)
    assert len(data) == 12
    assert markers.decode_key(data) == (partition, offset)


@given(INT64)
def test_deadline_markers_round_trip(deadline: int) -> None:
    key = markers.encode_key(0, 7)
    assert markers.decode(key, markers.extend(deadline), 0).deadline == deadline
    if deadline >= markers.ABSOLUTE_FROM:
        assert markers.decode(key, markers.start(deadline), 0).deadline == deadline


@given(st.integers(0, 2**62), st.integers(0, markers.MAX_SPAN - 1))
def test_ranges_round_trip(first: int, span: int) -> None:
    key = markers.encode_key(1, first)
    started = markers.decode(key, markers.start_range(5, first + span), 10)
    assert (started.kind, started.first, started.last, started.deadline) == (
        MarkerType.START,
        first,
        first + span,
        15,
    )
    ended = markers.decode(key, markers.end_range(first + span), 10)
    assert (ended.kind, ended.first, ended.last) == (MarkerType.END, first, first + span)


@given(st.text())
def test_reject_reason_round_trip(reason: str) -> None:
    found = markers.decode(markers.encode_key(0, 7), markers.reject(reason), 0)
    assert (found.kind, found.reason) == (MarkerType.REJECT, reason.encode())


@pytest.mark.parametrize(
    ("key", "message"),
    [(None, "got no key"), (b"", "got 0 bytes"), (b"\x00" * 13, "got 13 bytes")],
)
def test_bad_keys_say_what_is_wrong(key: bytes | None, message: str) -> None:
    with pytest.raises(MarkerError, match=message):
        markers.decode_key(key)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (b"", "empty"),
        (None, "empty"),
        (b"\x09", "unknown marker type 0x09"),
        (b"\x01\x00", "START marker must be 9 bytes"),
        (b"\x00\x00", "END marker must be 1 byte"),
        (b"\x03" + b"\x00" * 9, "EXTEND marker must be 9 bytes"),
        (markers.start_range(5, 9)[:-1], "START_RANGE marker must be 17 bytes, got 16"),
        (markers.end_range(9) + b"\x00", "END_RANGE marker must be 9 bytes, got 10"),
        (markers.start_range(5, 6), "range 7..6 is empty or reversed"),
        (markers.end_range(3), "range 7..3 is empty or reversed"),
        (markers.end_range(7 + markers.MAX_SPAN), f"spans more than {markers.MAX_SPAN} offsets"),
    ],
)
def test_bad_values_say_what_is_wrong(value: bytes | None, message: str) -> None:
    with pytest.raises(MarkerError, match=message):
        markers.decode(markers.encode_key(0, 7), value, 0)


@pytest.mark.parametrize(
    "value", [markers.start(5), markers.start_range(5, 9), markers.end_range(9)]
)
def test_a_start_or_range_below_offset_zero_is_no_marker(value: bytes) -> None:
    with pytest.raises(MarkerError, match="for queue offset -1, below any record"):
        markers.decode(markers.encode_key(0, -1), value, 0)


@given(st.binary(), st.binary(), INT64)
def test_garbage_never_escapes_as_another_error(key: bytes, value: bytes, timestamp: int) -> None:
    with contextlib.suppress(MarkerError):
        markers.decode_key(key)
    with contextlib.suppress(MarkerError):
        markers.decode(key, value, timestamp)
    with contextlib.suppress(MarkerError):
        markers.decode(markers.encode_key(0, 1), value, timestamp)


@given(st.integers(0, 2**31 - 1))
def test_redelivery_count_round_trip_in_kmq_encoding(count: int) -> None:
    data = headers.encode_count(count)
    assert len(data) == (1 if count < 128 else 4)
    assert headers.decode_count(data) == count


def test_redelivery_count_garbage() -> None:
    assert headers.decode_count(None) == 0
    with pytest.raises(headers.HeaderError, match="must be 1 or 4 bytes, got 3"):
        headers.decode_count(b"abc")
    with pytest.raises(headers.HeaderError, match="is negative: -2147483648"):
        headers.decode_count(b"\x80\x00\x00\x00")  # never dead-lettered: 2**31 redeliveries


TOPIC_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"


@given(
    # Any topic Kafka allows: a kmq-id names a real copy.
    st.text(TOPIC_CHARS, min_size=1, max_size=249).filter(lambda t: t not in (".", "..")),
    st.integers(0, 2**31 - 1),
    st.integers(0, 2**63 - 1),
)
def test_message_id_round_trip(topic: str, partition: int, offset: int) -> None:
    made = headers.message_id(topic, partition, offset)
    assert headers.parse_message_id(made) == (topic, partition, offset)


@pytest.mark.parametrize("text", ["", "orders", "orders/1", "orders/-1/2", "orders/1/²", "/1/2"])
def test_what_is_not_a_message_id(text: str) -> None:
    assert headers.parse_message_id(text) is None


# --- the tracker's hot-path decoder agrees with the codec ---------------------

P = 3
# Entries open before the marker under test, so END, EXTEND and REJECT act.
SEEDED = [(0, 1_000, 5), (1, 2_000, 6), (2, 2_000, 7)]

ours = st.builds(markers.encode_key, st.just(P), st.integers(-1, 4))  # hits the seeded entries
marker_keys = st.one_of(
    ours,
    ours,
    ours,
    st.none(),
    st.binary(max_size=16),
    st.builds(markers.encode_key, st.sampled_from([P + 1, -P]), st.integers(-1, 4)),
    st.builds(markers.encode_key, INT32, INT64),
)
near_the_switch = st.integers(markers.ABSOLUTE_FROM - 2, markers.ABSOLUTE_FROM + 1)
marker_values = st.one_of(
    st.none(),
    st.builds(markers.start, st.sampled_from([-(2**63), markers.ABSOLUTE_FROM - 1])),
    st.binary(max_size=12),
    st.builds(markers.start, INT64),
    st.builds(markers.start, st.integers(0, 2 * markers.ABSOLUTE_FROM)),
    st.builds(markers.start, near_the_switch),
    st.builds(markers.extend, INT64),
    st.builds(markers.reject, st.text(max_size=8)),
    st.just(markers.END),
    st.just(markers.END),
    st.just(markers.REDELIVER_NOW),
    st.just(markers.RETURN),
    st.builds(markers.start_range, st.integers(0, 2 * markers.ABSOLUTE_FROM), st.integers(-1, 6)),
    st.builds(markers.end_range, st.integers(-1, 6)),
    st.builds(lambda b, tail: bytes([b]) + tail, st.integers(0, 7), st.binary(max_size=17)),
)
timestamps = st.one_of(
    INT64, st.integers(-1, 2 * markers.ABSOLUTE_FROM), st.sampled_from([-1, 2**63 - 1])
)


def seeded() -> TrackedPartition:
    state = TrackedPartition(partition=P, next_offset=8)
    for queue_offset, deadline, marker_offset in SEEDED:
        state.open.start(queue_offset, queue_offset, deadline, marker_offset)
    state.rejected[2] = "earlier"
    return state


def through_codec(key: bytes | None, value: bytes | None, timestamp: int) -> tuple:
    state, skipped = seeded(), []
    state.next_offset = 9
    try:
        state.apply(key, value, timestamp, 8)
    except MarkerError as exc:
        skipped.append(str(exc))
    return snapshot(state), skipped


def through_hot_loop(key: bytes | None, value: bytes | None, timestamp: int) -> tuple:
    state, skipped = seeded(), []
    record = ConsumedRecord(P, 8, key, value, timestamp)
    apply_batch({P: state}, [record], lambda _s, _o, exc: skipped.append(str(exc)))
    return snapshot(state), skipped


@settings(max_examples=2000)
@given(marker_keys, marker_values, timestamps)
def test_the_hot_loop_and_the_codec_agree_on_every_record(
    key: bytes | None, value: bytes | None, timestamp: int
) -> None:
    """Neither raises anything but MarkerError (which the tracker counts, logs
    and skips), and both leave the same state."""
    assert through_hot_loop(key, value, timestamp) == through_codec(key, value, timestamp)


@pytest.mark.parametrize(
    ("timeout", "timestamp"), [(markers.ABSOLUTE_FROM - 1, 2**63 - 1), (-(2**63), -1)]
)
def test_a_start_whose_deadline_overflows_int64_is_skipped(timeout: int, timestamp: int) -> None:
    """A hostile START: timeout + the record's timestamp is past int64 (the
    tracker crash-looped on OverflowError)."""
    untouched = seeded()
    untouched.next_offset = 9
    expected = snapshot(untouched)
    for decode in (through_hot_loop, through_codec):
        state, skipped = decode(markers.encode_key(P, 9), markers.start(timeout), timestamp)
        assert skipped == [f"START timeout {timeout} + timestamp {timestamp} overflows int64"]
        assert state == expected


@given(st.sets(st.integers(0, 3 * markers.MAX_SPAN), min_size=1))
def test_spans_are_the_runs_of_consecutive_offsets_none_longer_than_a_range(
    offsets: set[int],
) -> None:
    found = markers.spans(sorted(offsets))
    assert [o for first, last in found for o in range(first, last + 1)] == sorted(offsets)
    assert all(0 <= last - first < markers.MAX_SPAN for first, last in found)
    # Split only at a gap, or where a run reached MAX_SPAN.
    for (before, last), (first, _) in itertools.pairwise(found):
        assert first > last + 1 or last - before == markers.MAX_SPAN - 1


def test_ends_are_an_end_each_in_kmqs_format_and_a_range_per_run_in_compact() -> None:
    acked = [7, 3, 4, 5, 9, 4]  # unsorted, with a repeat, as acks arrive
    assert markers.ends(acked, compact=False) == [(o, markers.END) for o in acked]
    assert markers.ends(acked, compact=True) == [
        (3, markers.end_range(5)),
        (7, markers.END),
        (9, markers.END),
    ]
    assert markers.ends([], compact=True) == markers.ends([], compact=False) == []
