"""A DLQ letter as the console and the API show it, and redriving one."""

import base64
from collections.abc import Iterable

from confluent_kafka import Message as KafkaMessage
from django.contrib.auth.base_user import AbstractBaseUser

from kmqadmin.kafka.record import UNDECODABLE, UndecodableRecord, hexed
from kmqadmin.kafka.record import headers as read_headers
from kmqadmin.kmq import headers as h
from kmqadmin.kmq.twin_letters import TwinLetters

from ..models import Queue
from . import audit, clients
from .missing import Missing


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode(errors="replace")


def letter_fields(letter: KafkaMessage) -> dict:
    """Text where the payload is UTF-8, base64 where it is not. A letter whose
    headers do not decode is shown as undecodable, its key and value in hex."""
    try:
        record_headers = read_headers(letter) or []
    except UndecodableRecord as exc:
        return _undecodable_fields(exc)
    value, encoding = letter.value(), "utf-8"
    try:
        shown_value = None if value is None else value.decode()
    except UnicodeDecodeError:
        shown_value, encoding = base64.b64encode(value).decode(), "base64"
    return {
        "partition": letter.partition(),
        "offset": letter.offset(),
        "timestamp_ms": letter.timestamp()[1],
        "id": _text(h.find(record_headers, h.MESSAGE_ID)),
        "reason": _text(h.find(record_headers, h.DLQ_REASON)),
        "detail": _text(h.find(record_headers, h.DLQ_DETAIL)),
        "key": _text(letter.key()),
        "value": shown_value,
        "encoding": encoding,
        "headers": {k: _text(v) or "" for k, v in record_headers},
    }


def page_fields(letters: Iterable[KafkaMessage]) -> list[dict]:
    """``letter_fields`` of a page's letters, each with ``duplicate_of``: the
    offset of an earlier letter in the page of the same failed record (a
    twin, kmq.twin_letters), else None. One message, not two."""
    twins = TwinLetters()
    return [{**letter_fields(letter), "duplicate_of": twins.twin_of(letter)} for letter in letters]


def _undecodable_fields(exc: UndecodableRecord) -> dict:
    return {
        "partition": exc.partition,
        "offset": exc.offset,
        "timestamp_ms": exc.timestamp,
        "id": None,
        "reason": UNDECODABLE,
        "detail": str(exc),
        "key": hexed(exc.key),
        "value": hexed(exc.value),
        "encoding": "hex",
        "headers": {},
    }


def redrive(user: AbstractBaseUser, queue: Queue, partition: int, offset: int) -> KafkaMessage:
    """One letter back to the queue, delivery count reset; returns the letter."""
    letters = clients.dead_letters(queue.config())
    known = partition in letters.partitions()
    letter = letters.get(partition, offset) if known else None
    if letter is None:
        raise Missing(f"no letter at {partition}/{offset} of {queue.topic}'s DLQ")
    stable = h.find_in(letter, h.MESSAGE_ID)
    where = f"{queue.topic}/dlq/{partition}/{offset}"
    target = stable.decode(errors="replace") if stable else where
    with audit.action(
        user,
        "redrive",
        target,
        before={"partition": partition, "offset": offset},
        after={"topic": queue.topic},
    ):
        letters.redrive([letter])
    return letter
