"""ShareCountsReader: per-minute sums of a counts topic, read from where the
window starts (never the whole topic), junk counted and skipped."""

from collections.abc import Iterator

import pytest
from confluent_kafka import Producer

from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq.share.counts import MINUTE_MS, BadCounts, ShareCounts, decode, minute_of
from kmqadmin.kmq.share.counts_reader import ShareCountsReader
from tests.consumed_record import ConsumedRecord


@pytest.fixture
def counts_topic(kafka: EmbeddedBroker, topic: str) -> str:
    ensure_topics(kafka.bootstrap_servers, {f"{topic}__counts": 2})
    return f"{topic}__counts"


@pytest.fixture
def reader(kafka: EmbeddedBroker, counts_topic: str) -> Iterator[ShareCountsReader]:
    made = ShareCountsReader(kafka.bootstrap_servers, counts_topic, timeout_s=10)
    yield made
    made.close()


def test_minutes_are_summed_across_clients_and_junk_is_skipped(
    kafka: EmbeddedBroker, counts_topic: str, reader: ShareCountsReader
) -> None:
    now = now_ms()
    last = minute_of(now) - MINUTE_MS  # the newest whole minute
    early = last - 2 * MINUTE_MS
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})

    def write(value: bytes, partition: int, written_at: int) -> None:
        producer.produce(counts_topic, value, b"client", partition=partition, timestamp=written_at)

    # Written long before the window: a reader that scanned would count it.
    write(ShareCounts(last, accepted=1000).encode(), 0, now - 3 * 3600_000)
    write(ShareCounts(early, accepted=3, released=1).encode(), 0, early + MINUTE_MS + 5)
    write(ShareCounts(early, accepted=4, rejected=2, dead_lettered=2).encode(), 1, early + 61_000)
    write(b"not counts", 1, last)
    write(ShareCounts(last, delayed=7).encode(), 1, now - 10)
    assert producer.flush(10) == 0

    window = reader.last(3, now=now)

    assert [c.minute for c in window.minutes] == [early, early + MINUTE_MS, last]
    assert window.minutes[0] == ShareCounts(early, 7, 1, 2, 2, 0)
    assert window.minutes[1] == ShareCounts(early + MINUTE_MS)
    assert window.minutes[2] == ShareCounts(last, delayed=7)
    assert window.bad_records == 1 and window.complete


def test_an_empty_counts_topic_is_zeros(reader: ShareCountsReader) -> None:
    window = reader.last(60)
    assert len(window.minutes) == 60 and not any(c.any() for c in window.minutes)
    assert window.complete and window.bad_records == 0


def test_counts_nested_past_the_stack_are_bad_counts() -> None:
    """A RecursionError escaped the reader: the share pages and /metrics failed."""
    with pytest.raises(BadCounts, match="nested too deeply"):
        decode(ConsumedRecord(0, 0, b"client", b"[" * 100_000))


def test_a_minute_no_date_holds_is_bad_counts() -> None:
    """The pipeline skips such a record (its time is the minute's): the
    console's reader must count it out too, not show it."""
    with pytest.raises(BadCounts, match="after the year 9999"):
        decode(ConsumedRecord(0, 0, b"client", b'{"minute": 1000000000000000}'))
    counts = decode(ConsumedRecord(0, 0, b"client", b'{"minute": 60000, "accepted": 2}'))
    assert counts.accepted == 2
