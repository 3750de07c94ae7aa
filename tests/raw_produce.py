"""Produce records whose header *names* are arbitrary bytes, for tests.

confluent-kafka's ``Producer.produce`` only takes ``str`` header names (and
segfaults on a lone surrogate), so it cannot write the records a Go, C or
kcat producer can: a header name that is not valid UTF-8. Such a record is
exactly what breaks ``Message.headers()`` (issue 17), so the tests that prove
every service survives it need a producer below the Python API. This module
calls the librdkafka that the confluent-kafka wheel bundles, through ctypes:
``rd_kafka_header_add`` takes the name with an explicit length, and
``rd_kafka_produceva`` sends the record with those headers. The library and
the client set-up are kmqadmin.kafka.client.librdkafka's, the one way to reach it.

Test-only: nothing in kmqadmin/ may depend on it.
"""

import ctypes
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kmqadmin.kafka.client.librdkafka import PRODUCER, Message, client, conf, error_text, library

_MSG_F_COPY = 0x2
_VTYPE_END, _VTYPE_TOPIC, _VTYPE_PARTITION = 0, 1, 3
_VTYPE_VALUE, _VTYPE_KEY, _VTYPE_MSGFLAGS, _VTYPE_TIMESTAMP, _VTYPE_HEADERS = 4, 5, 7, 8, 10


class _Mem(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p), ("size", ctypes.c_size_t)]


class _Value(ctypes.Union):
    _fields_ = [
        ("cstr", ctypes.c_char_p),
        ("i32", ctypes.c_int32),
        ("i", ctypes.c_int),
        ("i64", ctypes.c_int64),
        ("mem", _Mem),
        ("headers", ctypes.c_void_p),
        ("_pad", ctypes.c_char * 64),
    ]


class _Vu(ctypes.Structure):
    """rd_kafka_vu_t: one typed argument of rd_kafka_produceva."""

    _fields_ = [("vtype", ctypes.c_int), ("u", _Value)]


_DeliveryCallback = ctypes.CFUNCTYPE(
    None, ctypes.c_void_p, ctypes.POINTER(Message), ctypes.c_void_p
)


def _load() -> ctypes.CDLL:
    """The shared library, with the producer functions declared."""
    lib = library()
    lib.rd_kafka_conf_set_dr_msg_cb.restype = None
    lib.rd_kafka_conf_set_dr_msg_cb.argtypes = [ctypes.c_void_p, _DeliveryCallback]
    lib.rd_kafka_headers_new.restype = ctypes.c_void_p
    lib.rd_kafka_headers_new.argtypes = [ctypes.c_size_t]
    lib.rd_kafka_headers_destroy.restype = None
    lib.rd_kafka_headers_destroy.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_header_add.restype = ctypes.c_int
    lib.rd_kafka_header_add.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ssize_t]
    lib.rd_kafka_header_add.argtypes += [ctypes.c_char_p, ctypes.c_ssize_t]
    lib.rd_kafka_produceva.restype = ctypes.c_void_p
    lib.rd_kafka_produceva.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Vu), ctypes.c_size_t]
    lib.rd_kafka_error_string.restype = ctypes.c_char_p
    lib.rd_kafka_error_string.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_error_destroy.restype = None
    lib.rd_kafka_error_destroy.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_flush.restype = ctypes.c_int
    lib.rd_kafka_flush.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


_lib = _load()


@dataclass(frozen=True)
class RawRecord:
    """One record as raw bytes; a header value of None is a null value."""

    value: bytes | None
    key: bytes | None = None
    headers: Sequence[tuple[bytes, bytes | None]] = field(default_factory=tuple)
    partition: int = 0
    timestamp: int | None = None


def produce_raw(bootstrap: str, topic: str, records: Iterable[RawRecord]) -> list[int]:
    """Write ``records`` to ``topic`` and wait until all are acknowledged.

    Returns their offsets in order; raises if any record was not delivered."""
    delivered: list[tuple[int, int]] = []

    @_DeliveryCallback
    def on_delivery(_rk: int, message: ctypes.POINTER(Message), _opaque: int) -> None:
        delivered.append((message.contents.err, message.contents.offset))

    rk = _producer(bootstrap, on_delivery)
    try:
        sent = 0
        for record in records:
            _send(rk, topic, record)
            sent += 1
        if _lib.rd_kafka_flush(rk, 30_000) != 0 or len(delivered) != sent:
            raise RuntimeError(f"raw produce to {topic}: {len(delivered)}/{sent} delivered")
    finally:
        _lib.rd_kafka_destroy(rk)
    failed = [error_text(err) for err, _ in delivered if err]
    if failed:
        raise RuntimeError(f"raw produce to {topic} failed: {failed}")
    return [offset for _, offset in delivered]


def _producer(bootstrap: str, on_delivery: object) -> int:
    handle = conf({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
    _lib.rd_kafka_conf_set_dr_msg_cb(handle, on_delivery)
    return client(PRODUCER, handle)


def _send(rk: int, topic: str, record: RawRecord) -> None:
    hdrs = _lib.rd_kafka_headers_new(max(1, len(record.headers)))
    for name, value in record.headers:
        size = -1 if value is None else len(value)
        _lib.rd_kafka_header_add(hdrs, name, len(name), value, size)
    args = [
        _arg(_VTYPE_TOPIC, cstr=topic.encode()),
        _arg(_VTYPE_PARTITION, i32=record.partition),
        _arg(_VTYPE_MSGFLAGS, i=_MSG_F_COPY),
        _mem(_VTYPE_KEY, record.key),
        _mem(_VTYPE_VALUE, record.value),
        _arg(_VTYPE_HEADERS, headers=hdrs),
    ]
    if record.timestamp is not None:
        args.append(_arg(_VTYPE_TIMESTAMP, i64=record.timestamp))
    array = (_Vu * len(args))(*args)
    error = _lib.rd_kafka_produceva(rk, array, len(args))
    if error:
        message = _lib.rd_kafka_error_string(error).decode()
        _lib.rd_kafka_error_destroy(error)
        _lib.rd_kafka_headers_destroy(hdrs)  # ownership passes only on success
        raise RuntimeError(f"rd_kafka_produceva to {topic}: {message}")


def _arg(vtype: int, **value: object) -> _Vu:
    return _Vu(vtype, _Value(**value))


def _mem(vtype: int, data: bytes | None) -> _Vu:
    """A key or value; ctypes keeps ``data`` alive for the call, and
    RD_KAFKA_MSG_F_COPY makes librdkafka copy it before returning."""
    if data is None:
        return _arg(vtype, mem=_Mem(None, 0))
    return _arg(vtype, mem=_Mem(ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p), len(data)))
