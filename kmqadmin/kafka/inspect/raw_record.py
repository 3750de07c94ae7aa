"""The raw headers of one record, read below confluent-kafka's Python API.

A record whose header name is not UTF-8 cannot be decoded by confluent-kafka
2.16.1 (kafka/client/record.py); a person looking at such a record still needs
to see what its headers are. This reads the one record at (topic, partition,
offset) with a short-lived consumer over the bundled librdkafka and copies
each header's name and value out as bytes, every copy with an explicit length.
It costs a client set-up per call, so it is for one record a person asks
about, never for a list or a service's loop.

librdkafka hands header names out as C strings: a name holding a NUL byte
shows up to that byte (its length is not in the public API).
"""

import ctypes
import time
from collections.abc import Mapping
from typing import Any

from kmqadmin.kafka.client.bounds import MAX_OFFSET, MAX_PARTITION
from kmqadmin.kafka.client.clock import to_ms
from kmqadmin.kafka.client.config import client_config
from kmqadmin.kafka.client.librdkafka import (
    CONSUMER,
    LibrdkafkaError,
    Message,
    client,
    conf,
    error_text,
    library,
)

RawHeaders = list[tuple[bytes, bytes | None]]

_ERR_NOENT = -156  # rd_kafka_message_headers: the record has no headers
_ERR_PARTITION_EOF = -191
_MAX_NAME = 1 << 20  # bounds the NUL search in a header name
# Assigned, never subscribed: the group id is only what consumer_poll needs;
# nothing is committed and no group is joined.
_READER = {
    "group.id": "kmqadmin-raw-reader",
    "enable.auto.commit": False,
    "enable.auto.offset.store": False,
    "auto.offset.reset": "error",  # an offset out of range is an answer, not a reset
    "enable.partition.eof": True,  # so is the end of the partition
}


class RawReadError(LibrdkafkaError):
    """The record could not be read raw: absent, unreachable, too slow."""


def _declared() -> ctypes.CDLL:
    lib = library()
    pointer, out_pointer = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
    declarations = {
        "rd_kafka_topic_partition_list_new": (pointer, [ctypes.c_int]),
        "rd_kafka_topic_partition_list_add": (pointer, [pointer, ctypes.c_char_p, ctypes.c_int32]),
        "rd_kafka_topic_partition_list_set_offset": (
            ctypes.c_int,
            [pointer, ctypes.c_char_p, ctypes.c_int32, ctypes.c_int64],
        ),
        "rd_kafka_topic_partition_list_destroy": (None, [pointer]),
        "rd_kafka_assign": (ctypes.c_int, [pointer, pointer]),
        "rd_kafka_consumer_poll": (ctypes.POINTER(Message), [pointer, ctypes.c_int]),
        "rd_kafka_message_destroy": (None, [ctypes.POINTER(Message)]),
        "rd_kafka_message_headers": (ctypes.c_int, [ctypes.POINTER(Message), out_pointer]),
        "rd_kafka_header_cnt": (ctypes.c_size_t, [pointer]),
        "rd_kafka_header_get_all": (
            ctypes.c_int,
            [pointer, ctypes.c_size_t, out_pointer, out_pointer, ctypes.POINTER(ctypes.c_size_t)],
        ),
        "rd_kafka_consumer_close": (ctypes.c_int, [pointer]),
    }
    for name, (restype, argtypes) in declarations.items():
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes
    return lib


_lib = _declared()
_strnlen = ctypes.CDLL(None).strnlen
_strnlen.restype, _strnlen.argtypes = ctypes.c_size_t, [ctypes.c_void_p, ctypes.c_size_t]


def read_headers(
    bootstrap_servers: str,
    settings: Mapping[str, Any],
    topic: str,
    partition: int,
    offset: int,
    timeout_s: float = 5.0,
) -> RawHeaders:
    """The headers of the record at ``topic/partition/offset`` as bytes, a
    null value as None; RawReadError within about ``timeout_s`` otherwise.
    ``settings`` are the cluster's client settings (security included)."""
    where = f"{topic}/{partition}/{offset}"
    if not (0 <= partition <= MAX_PARTITION and 0 <= offset <= MAX_OFFSET):
        raise RawReadError(f"{where}: partition or offset out of Kafka's bounds")
    # Not the Python client's logger: this handle is librdkafka's own.
    settings = {**client_config(bootstrap_servers, settings), **_READER}
    handle = conf({key: value for key, value in settings.items() if key != "logger"})
    rk = client(CONSUMER, handle)
    try:
        _assign(rk, topic, partition, offset, where)
        message = _poll(rk, time.monotonic() + timeout_s, where)
        try:
            return _headers(message, offset, where)
        finally:
            _lib.rd_kafka_message_destroy(message)
    finally:
        _lib.rd_kafka_consumer_close(rk)
        _lib.rd_kafka_destroy(rk)


def _assign(rk: int, topic: str, partition: int, offset: int, where: str) -> None:
    partitions = _lib.rd_kafka_topic_partition_list_new(1)
    try:
        _lib.rd_kafka_topic_partition_list_add(partitions, topic.encode(), partition)
        _lib.rd_kafka_topic_partition_list_set_offset(partitions, topic.encode(), partition, offset)
        if err := _lib.rd_kafka_assign(rk, partitions):
            raise RawReadError(f"{where}: assign failed: {error_text(err)}")
    finally:
        _lib.rd_kafka_topic_partition_list_destroy(partitions)


def _poll(rk: int, deadline: float, where: str) -> "ctypes._Pointer[Message]":
    while (left := deadline - time.monotonic()) > 0:
        message = _lib.rd_kafka_consumer_poll(rk, max(1, to_ms(left)))
        if message:
            return message
    raise RawReadError(f"{where}: no answer from the cluster in time")


def _headers(message: "ctypes._Pointer[Message]", offset: int, where: str) -> RawHeaders:
    found = message.contents
    if found.err == _ERR_PARTITION_EOF:
        raise RawReadError(f"{where}: no record there (the partition ends at {found.offset})")
    if found.err:
        detail = _bytes(found.payload, found.len) or error_text(found.err).encode()
        raise RawReadError(f"{where}: {detail.decode(errors='replace')}")
    if found.offset != offset:
        raise RawReadError(f"{where}: no record there (the next is at {found.offset})")
    headers = ctypes.c_void_p()
    err = _lib.rd_kafka_message_headers(message, ctypes.byref(headers))
    if err == _ERR_NOENT:
        return []
    if err:
        raise RawReadError(f"{where}: headers: {error_text(err)}")
    return [_header(headers, index, where) for index in range(_lib.rd_kafka_header_cnt(headers))]


def _header(headers: ctypes.c_void_p, index: int, where: str) -> tuple[bytes, bytes | None]:
    name, value, size = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_size_t()
    err = _lib.rd_kafka_header_get_all(
        headers, index, ctypes.byref(name), ctypes.byref(value), ctypes.byref(size)
    )
    if err or not name.value:
        raise RawReadError(f"{where}: header {index}: {error_text(err)}")
    return ctypes.string_at(name.value, _strnlen(name, _MAX_NAME)), _bytes(value.value, size.value)


def _bytes(pointer: int | None, size: int) -> bytes | None:
    """``size`` bytes at ``pointer``; None for a NULL pointer (a null value)."""
    return None if not pointer else ctypes.string_at(pointer, size)
