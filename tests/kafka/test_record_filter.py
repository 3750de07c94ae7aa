"""The browser's record filter, on records built in memory (pure logic)."""

import json

import pytest
from confluent_kafka import Message

from kmqadmin.kafka.inspect.record_filter import FilterError, RecordFilter


def record(value: bytes | None = b"", key: bytes | None = None, headers=None) -> Message:
    return Message(topic="t", partition=0, offset=1, key=key, value=value, headers=headers)


ORDER = json.dumps({"id": 7, "items": [{"sku": "a", "qty": 1}, {"sku": "b", "qty": 5}]}).encode()


def test_an_empty_filter_matches_everything_even_a_tombstone() -> None:
    match = RecordFilter.build()
    assert match.empty
    assert match(record(None)) and match(record(b"\xff"))


def test_key_and_payload_are_substrings() -> None:
    match = RecordFilter.build(key="ord", contains='"sku"')
    assert match(record(ORDER, key=b"order-7"))
    assert not match(record(ORDER, key=b"invoice-7"))
    assert not match(record(b"plain", key=b"order-7"))
    assert not match(record(ORDER, key=None))


def test_a_header_by_name_or_by_name_and_exact_value() -> None:
    tagged = record(headers=[("tenant", b"acme"), ("empty", None)])
    assert RecordFilter.build(header="tenant")(tagged)
    assert RecordFilter.build(header="tenant=acme")(tagged)
    assert not RecordFilter.build(header="tenant=acm")(tagged)
    assert not RecordFilter.build(header="region")(tagged)
    assert RecordFilter.build(header="empty")(tagged)
    assert not RecordFilter.build(header="tenant")(record())


def test_jsonpath_matches_when_it_selects_something() -> None:
    big_order = RecordFilter.build(json_path="$.items[?@.qty > 3]")
    assert big_order(record(ORDER))
    assert not big_order(record(json.dumps({"items": [{"qty": 1}]}).encode()))
    assert RecordFilter.build(json_path="$.id")(record(ORDER))
    assert not RecordFilter.build(json_path="$.missing")(record(ORDER))


def test_a_filter_after_the_root_tests_the_root_too_as_jayway_does() -> None:
    failed = RecordFilter.build(json_path="$[?@.status == 'failed']")
    assert failed(record(b'{"status": "failed"}'))
    assert not failed(record(b'{"status": "ok"}'))
    assert failed(record(b'[{"status": "failed"}]'))  # RFC 9535's reading still holds
    assert not RecordFilter.build(json_path="$[0]")(record(b'{"status": "failed"}'))


@pytest.mark.parametrize("value", [None, b"", b"not json", b"\xff\xfe", b"[" * 100_000])
def test_jsonpath_passes_over_what_is_not_json_without_an_error(value: bytes | None) -> None:
    assert not RecordFilter.build(json_path="$..x")(record(value))


@pytest.mark.parametrize(
    ("given", "part"),
    [
        ({"json_path": "$["}, "json_path"),
        ({"json_path": "$.items[?@.qty >]"}, "json_path"),
        ({"header": "=x"}, "header"),
    ],
)
def test_a_bad_filter_is_refused_when_built_naming_its_part(given: dict, part: str) -> None:
    with pytest.raises(FilterError) as refused:
        RecordFilter.build(**given)
    assert refused.value.part == part
    assert str(refused.value)
