"""The librdkafka that the confluent-kafka wheel bundles, through ctypes.

Some records can only be read (or, in tests, written) below confluent-kafka's
Python API: a header whose name is not UTF-8 (issue 17). Loading the very
library confluent-kafka itself runs keeps one librdkafka in the process, at
the version we pinned, and needs no other package. Every caller goes through
``library()`` and ``client()``; each declares argtypes and restype on the
functions it calls, so ctypes never guesses an int for a pointer.
"""

import ctypes
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import confluent_kafka

from kmqadmin.kafka.client.security.masking import is_secret

PRODUCER, CONSUMER = 0, 1
_ERRSTR_SIZE = 512


class LibrdkafkaError(RuntimeError):
    """A librdkafka call failed; the message says which and why."""


class Message(ctypes.Structure):
    """rd_kafka_message_t exactly as rdkafka.h declares it."""

    _fields_ = [
        ("err", ctypes.c_int),
        ("rkt", ctypes.c_void_p),
        ("partition", ctypes.c_int32),
        ("payload", ctypes.c_void_p),
        ("len", ctypes.c_size_t),
        ("key", ctypes.c_void_p),
        ("key_len", ctypes.c_size_t),
        ("offset", ctypes.c_int64),
        ("_private", ctypes.c_void_p),
    ]


def library_path() -> Path:
    libs = Path(confluent_kafka.__file__).parent.parent / "confluent_kafka.libs"
    found = sorted(libs.glob("librdkafka-*.so*"))
    if not found:
        raise LibrdkafkaError(f"no bundled librdkafka under {libs}")
    return found[0]


@cache
def library() -> ctypes.CDLL:
    """The bundled library, with the client set-up functions declared."""
    lib = ctypes.CDLL(str(library_path()))
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_conf_new.argtypes = []
    lib.rd_kafka_conf_set.restype = ctypes.c_int
    lib.rd_kafka_conf_set.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_size_t,
    ]
    lib.rd_kafka_conf_destroy.restype = None
    lib.rd_kafka_conf_destroy.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_destroy.restype = None
    lib.rd_kafka_destroy.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_err2str.restype = ctypes.c_char_p
    lib.rd_kafka_err2str.argtypes = [ctypes.c_int]
    return lib


def error_text(err: int) -> str:
    """librdkafka's name for an error code (a static C string)."""
    return (library().rd_kafka_err2str(err) or b"").decode(errors="replace")


def conf(settings: Mapping[str, Any]) -> int:
    """A new rd_kafka_conf_t holding ``settings``; the caller owns it until
    rd_kafka_new succeeds with it. Booleans become "true"/"false" as in the
    Python client. A setting librdkafka refuses raises, naming it; its reason
    quotes the value, so it is left out when the setting is a secret."""
    lib = library()
    handle = lib.rd_kafka_conf_new()
    errstr = ctypes.create_string_buffer(_ERRSTR_SIZE)
    for name, value in settings.items():
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        if lib.rd_kafka_conf_set(handle, name.encode(), text.encode(), errstr, _ERRSTR_SIZE):
            lib.rd_kafka_conf_destroy(handle)
            why = "refused" if is_secret(name) else errstr.value.decode(errors="replace")
            raise LibrdkafkaError(f"librdkafka setting {name}: {why}")
    return handle


def client(kind: int, handle: int) -> int:
    """rd_kafka_new with ``handle``: on success the client owns the conf, on
    failure it is destroyed here, so the caller never has to."""
    lib = library()
    errstr = ctypes.create_string_buffer(_ERRSTR_SIZE)
    rk = lib.rd_kafka_new(kind, handle, errstr, _ERRSTR_SIZE)
    if not rk:
        lib.rd_kafka_conf_destroy(handle)
        raise LibrdkafkaError(f"rd_kafka_new: {errstr.value.decode()}")
    return rk
