"""The pipeline's Kafka reader over a record whose headers confluent-kafka
cannot decode (a header name that is not UTF-8, issue 17), or whose time no
timestamp column holds: read with null headers or time and logged, its
neighbours whole; no Spark needed to show it."""

import logging

import pytest

from kmqadmin.kafka.admin.stretch import OffsetRange
from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.pipeline.records import read_range
from tests.raw_produce import RawRecord, produce_raw


def test_it_is_read_with_null_headers_and_logged(
    kafka: EmbeddedBroker, topic: str, caplog: pytest.LogCaptureFixture
) -> None:
    ensure_topics(kafka.bootstrap_servers, {topic: 1})
    records = [
        RawRecord(b"a", headers=[(b"h", b"1")]),
        RawRecord(b"poison", key=b"k", headers=[(b"\xff", b"x")]),
        RawRecord(b"b"),
    ]
    produce_raw(kafka.bootstrap_servers, topic, records)
    config = {"bootstrap.servers": kafka.bootstrap_servers, "group.id": "pipeline-test"}

    with caplog.at_level(logging.WARNING):
        [batch] = list(read_range(config, OffsetRange(topic, 0, 0, 3)))

    rows = batch.to_pylist()
    assert [r["value"] for r in rows] == [b"a", b"poison", b"b"]
    assert [r["headers"] for r in rows] == [[{"key": "h", "value": b"1"}], None, None]
    assert f"{topic}/0/1: headers undecodable" in caplog.text


def test_a_time_beyond_a_timestamp_column_is_read_as_null_and_logged(
    kafka: EmbeddedBroker, topic: str, caplog: pytest.LogCaptureFixture
) -> None:
    ensure_topics(kafka.bootstrap_servers, {topic: 1})
    # Kafka 4's default broker takes any CreateTime in the past, this one too.
    records = [RawRecord(b"a", timestamp=1000), RawRecord(b"far", timestamp=-(10**16))]
    produce_raw(kafka.bootstrap_servers, topic, records)
    config = {"bootstrap.servers": kafka.bootstrap_servers, "group.id": "pipeline-test"}

    with caplog.at_level(logging.WARNING):
        [batch] = list(read_range(config, OffsetRange(topic, 0, 0, 2)))

    assert [r["value"] for r in batch.to_pylist()] == [b"a", b"far"]
    assert batch.column("timestamp").cast("int64").to_pylist() == [1_000_000, None]
    assert f"{topic}/0/1: timestamp {-(10**16)} ms overflows" in caplog.text
