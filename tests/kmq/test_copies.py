"""What a due message becomes (copies.next_copy), on records built here."""

from kmqadmin.kmq import headers
from kmqadmin.kmq.copies import next_copy
from tests.consumed_record import ConsumedRecord


def record(count: int | None) -> ConsumedRecord:
    found = [] if count is None else [(headers.REDELIVERY_COUNT, headers.encode_count(count))]
    return ConsumedRecord(0, 7, b"k", b"v", headers_=found, topic_="orders")


def count_of(out_headers: headers.Headers) -> int:
    return headers.decode_count(headers.find(out_headers, headers.REDELIVERY_COUNT))


def test_a_redelivery_counts_and_the_last_one_is_dead_lettered() -> None:
    assert count_of(next_copy(record(None), 3, None).headers) == 1
    assert next_copy(record(3), 3, None).dead_letter


def test_a_delivery_no_one_saw_keeps_its_count_even_at_the_limit() -> None:
    first = next_copy(record(None), 3, None, unseen=True)
    assert not first.dead_letter
    assert count_of(first.headers) == 0
    assert headers.find(first.headers, headers.MESSAGE_ID) == b"orders/0/7"
    last = next_copy(record(3), 3, None, unseen=True)
    assert (last.dead_letter, count_of(last.headers)) == (False, 3)


def test_a_rejected_one_is_dead_lettered_even_if_given_back() -> None:
    assert next_copy(record(0), 3, "poison", unseen=True).dead_letter
