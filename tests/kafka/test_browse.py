"""TopicBrowser and Tail on the real broker: seeks, both directions, every
cap, and the live tail's rate cap."""

import json
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer

from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.client.errors import TopicMissing
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kafka.inspect.browse import NEWEST, BadSeek, Caps, Seek, Stop, TopicBrowser
from kmqadmin.kafka.inspect.record_filter import RecordFilter
from kmqadmin.kafka.inspect.tail import Tail
from tests.process import wait_for

T0 = 1_700_000_000_000  # record i is written at T0 + i s
N = 300


@pytest.fixture
def filled(kafka: EmbeddedBroker, topic: str) -> str:
    """Partition 0 of ``topic`` holds N records: key k<i>, JSON {"i": i}, a header."""
    ensure_topics(kafka.bootstrap_servers, {topic: 2})
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers, "linger.ms": 20})
    for i in range(N):
        value = json.dumps({"i": i}).encode()
        headers = [("parity", b"even" if i % 2 == 0 else b"odd")]
        producer.produce(
            topic, value, f"k{i}", partition=0, timestamp=T0 + i * 1000, headers=headers
        )
    assert producer.flush(30) == 0
    return topic


@pytest.fixture
def browser(kafka: EmbeddedBroker) -> Iterator[TopicBrowser]:
    found = TopicBrowser(kafka.bootstrap_servers, {})
    yield found
    found.close()


def offsets(page) -> list[int]:
    return [record.offset for record in page.records]


def test_forward_from_an_offset_fills_the_page_and_says_where_to_go_on(browser, filled) -> None:
    page = browser.page(filled, Seek(0, offset=10), None, Caps(records=5))
    assert offsets(page) == [10, 11, 12, 13, 14]
    assert (page.stopped, page.next_offset, page.low, page.high) == (Stop.RECORDS, 15, 0, N)
    assert page.records[0].key == b"k10" and page.records[0].headers == [("parity", b"even")]
    last = browser.page(filled, Seek(0, offset=N - 2), None, Caps(records=5))
    assert (offsets(last), last.stopped, last.next_offset) == ([N - 2, N - 1], Stop.END, None)


def test_backward_reads_the_records_before_the_start_newest_first(browser, filled) -> None:
    newest = browser.page(filled, Seek(0, edge=NEWEST, backward=True), None, Caps(records=3))
    assert offsets(newest) == [N - 1, N - 2, N - 3] and newest.next_offset == N - 3
    before = browser.page(filled, Seek(0, offset=newest.next_offset, backward=True), None)
    assert offsets(before) == list(range(N - 4, -1, -1))[:100]
    # Windows of WINDOW offsets are read forward: a page spans them in order.
    spanning = browser.page(filled, Seek(0, offset=5, backward=True), None, Caps(records=10))
    assert offsets(spanning) == [4, 3, 2, 1, 0] and spanning.stopped == Stop.END


def test_a_time_seeks_with_offsets_for_times_both_ways(browser, filled) -> None:
    at = T0 + 42_500  # between records 42 and 43
    forward = browser.page(filled, Seek(0, time_ms=at), None, Caps(records=2))
    assert forward.start == 43 and offsets(forward) == [43, 44]
    backward = browser.page(filled, Seek(0, time_ms=at, backward=True), None, Caps(records=2))
    assert offsets(backward) == [42, 41]
    late = browser.page(filled, Seek(0, time_ms=T0 + 10**9), None)
    assert (late.start, offsets(late), late.stopped) == (N, [], Stop.END)


def test_filters_narrow_the_page_in_both_directions(browser, filled) -> None:
    odd_json = RecordFilter.build(header="parity=odd", json_path="$[?@.i > 250]", key="k2")
    forward = browser.page(filled, Seek(0), odd_json)
    assert offsets(forward) == [i for i in range(251, N) if i % 2 and str(i).startswith("2")]
    backward = browser.page(filled, Seek(0, edge=NEWEST, backward=True), odd_json, Caps(records=3))
    assert offsets(backward) == [299, 297, 295]
    contains = browser.page(filled, Seek(0), RecordFilter.build(contains='{"i": 7}'))
    assert offsets(contains) == [7]


def test_the_scan_cap_stops_a_sparse_filter_and_the_continuation_finds_the_match(
    browser, filled
) -> None:
    rare = RecordFilter.build(key="k299")
    caps = Caps(scanned=100)
    page = browser.page(filled, Seek(0), rare, caps)
    assert (offsets(page), page.stopped, page.scanned, page.next_offset) == (
        [],
        Stop.SCANNED,
        100,
        100,
    )
    assert page.capped
    while page.stopped is not Stop.END and not page.records:
        page = browser.page(filled, Seek(0, offset=page.next_offset), rare, caps)
        assert page.scanned <= 100
    assert offsets(page) == [299]
    back = browser.page(
        filled, Seek(0, edge=NEWEST, backward=True), RecordFilter.build(key="k0"), caps
    )
    assert (back.stopped, back.scanned, back.next_offset) == (Stop.SCANNED, 100, N - 100)


def test_the_time_cap_stops_a_read_and_says_where_it_got(browser, filled) -> None:
    page = browser.page(filled, Seek(0, offset=7), RecordFilter.build(key="none"), Caps(seconds=0))
    assert page.stopped == Stop.TIME and page.next_offset is not None and page.next_offset >= 7
    back = browser.page(filled, Seek(0, edge=NEWEST, backward=True), None, Caps(seconds=0))
    assert (back.stopped, back.next_offset, offsets(back)) == (Stop.TIME, N, [])


def test_a_partition_or_topic_that_does_not_exist_is_said(browser, filled) -> None:
    with pytest.raises(BadSeek, match=r"partitions \[0, 1\], not 5"):
        browser.page(filled, Seek(5), None)
    with pytest.raises(TopicMissing):
        browser.page(f"{filled}-nope", Seek(0), None)


def test_one_record_by_its_offset_or_none(browser, filled) -> None:
    found = browser.record(filled, 0, 17)
    assert found is not None and (found.key, found.timestamp_ms) == (b"k17", T0 + 17_000)
    assert browser.record(filled, 0, N) is None
    assert browser.record(filled, 1, 0) is None  # an empty partition


def test_the_tail_hands_out_new_matches_at_a_capped_rate(kafka: EmbeddedBroker, filled) -> None:
    tail = Tail(kafka.bootstrap_servers, {}, filled, RecordFilter.build(key="new"), rate=5)
    try:
        assert tail.started == {0: N, 1: 0}
        producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
        producer.produce(filled, b"old-style", b"other", partition=1)
        for i in range(12):
            producer.produce(filled, b"{}", f"new{i}", partition=i % 2)
        assert producer.flush(10) == 0
        shown, skipped = [], 0

        def all_seen() -> bool:
            nonlocal skipped
            batch = tail.poll(0.5)
            assert len(batch.records) <= 5
            shown.extend(batch.records)
            skipped += batch.skipped
            return len(shown) + skipped >= 12

        wait_for(all_seen, 20, "12 new records")
        assert skipped > 0 and all(r.key.startswith(b"new") for r in shown)
    finally:
        tail.close()
    tail.close()  # twice is harmless
    assert tail.poll(0).records == []
