"""kafka.inspect.raw_record: one record's headers as bytes, read below the
Python API, on the real broker; every way it cannot answer is a bounded, clear
error."""

import time

import pytest

from kmqadmin.kafka.client.librdkafka import LibrdkafkaError
from kmqadmin.kafka.inspect import raw_record
from kmqadmin.kmq import QueueConfig
from tests.raw_produce import RawRecord, produce_raw

HEADERS = [(b"\xff\xfe", b"\x00\x01"), (b"ok", None), (b"empty", b""), (b"ok", b"again")]


def read(queue: QueueConfig, offset: int, timeout_s: float = 5.0) -> raw_record.RawHeaders:
    return raw_record.read_headers(
        queue.bootstrap_servers, queue.kafka_config, queue.topic, 1, offset, timeout_s
    )


def test_every_header_of_the_record_asked_for_arrives_byte_for_byte(queue: QueueConfig) -> None:
    records = [
        RawRecord(b"a", headers=[(b"first", b"1")], partition=1),
        RawRecord(b"b", headers=HEADERS, partition=1),
        RawRecord(b"c", partition=1),
    ]
    produce_raw(queue.bootstrap_servers, queue.topic, records)

    assert read(queue, 1) == HEADERS
    assert read(queue, 0) == [(b"first", b"1")]
    assert read(queue, 2) == []


@pytest.mark.parametrize("offset", [1, 1000])
def test_an_offset_with_no_record_is_a_prompt_clear_error(queue: QueueConfig, offset: int) -> None:
    produce_raw(queue.bootstrap_servers, queue.topic, [RawRecord(b"only", partition=1)])

    started = time.monotonic()
    with pytest.raises(raw_record.RawReadError, match=f"{queue.topic}/1/{offset}"):
        read(queue, offset, timeout_s=20)
    assert time.monotonic() - started < 10  # an answer from the broker, not the deadline


def test_an_unreachable_cluster_times_out_within_the_bound() -> None:
    started = time.monotonic()
    with pytest.raises(raw_record.RawReadError, match="no answer from the cluster in time"):
        raw_record.read_headers("127.0.0.1:9", {}, "t", 0, 0, timeout_s=1)
    assert time.monotonic() - started < 5


def test_the_callers_client_settings_are_applied(queue: QueueConfig) -> None:
    with pytest.raises(LibrdkafkaError, match=r"security\.protocol"):
        raw_record.read_headers(
            queue.bootstrap_servers, {"security.protocol": "CARRIER_PIGEON"}, queue.topic, 0, 0
        )


@pytest.mark.parametrize(("partition", "offset"), [(0, -1), (-1, 0), (1 << 31, 0), (0, 1 << 63)])
def test_a_coordinate_out_of_bounds_is_refused_before_any_client_is_made(
    partition: int, offset: int
) -> None:
    with pytest.raises(raw_record.RawReadError, match="out of Kafka's bounds"):
        raw_record.read_headers("127.0.0.1:9", {}, "t", partition, offset)
