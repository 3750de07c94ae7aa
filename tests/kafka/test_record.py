"""kafka.client.record.headers: the one safe read of a record's headers."""

import pytest

from kmqadmin.kafka.client import record
from kmqadmin.kmq import QueueConfig
from tests.kafka_helpers import read_all
from tests.raw_produce import RawRecord, produce_raw

POISON = RawRecord(b"v", key=b"k", headers=[(b"\xff", b"x"), (b"ok", b"y")], timestamp=1234)


def test_an_undecodable_record_raises_every_time_and_never_crashes(queue: QueueConfig) -> None:
    produce_raw(queue.bootstrap_servers, queue.topic, [POISON])
    (poison,) = read_all(queue, queue.topic)

    for _ in range(3):  # the second raw headers() call would segfault
        with pytest.raises(record.UndecodableRecord) as raised:
            record.headers(poison)
        got = raised.value
        assert (got.coordinates, got.key, got.value, got.timestamp) == (
            f"{queue.topic}/0/0",
            b"k",
            b"v",
            1234,
        )
        assert "not UTF-8" in str(got)
    assert list(poison.headers()) == []  # a stray direct read finds nothing to crash on


def test_the_bug_is_caught_in_a_hot_loop_too(queue: QueueConfig) -> None:
    """CPython skips the check that raises SystemError once it has
    specialised a hot ``headers()`` call: record.headers must not rely on it."""
    good = RawRecord(b"ok", headers=[(b"a", b"1")])
    produce_raw(queue.bootstrap_servers, queue.topic, [good] * 50 + [POISON])

    *decodable, poison = read_all(queue, queue.topic)
    for r in decodable:
        assert record.headers(r) == [("a", b"1")]
    with pytest.raises(record.UndecodableRecord):
        record.headers(poison)


def test_a_decodable_record_reads_as_before(queue: QueueConfig) -> None:
    produce_raw(queue.bootstrap_servers, queue.topic, [RawRecord(b"v", headers=[(b"a", b"1")])])
    produce_raw(queue.bootstrap_servers, queue.topic, [RawRecord(b"w")])
    first, second = read_all(queue, queue.topic)

    assert record.headers(first) == record.headers(first) == [("a", b"1")]
    assert record.headers(second) is None


def test_hexed() -> None:
    assert record.hexed(None) is None
    assert record.hexed(b"\x00\xff") == "00 ff"
    assert record.hexed(b"abc", limit=2) == "61 62 … (3 bytes)"
