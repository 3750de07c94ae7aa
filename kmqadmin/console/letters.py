"""A DLQ letter as the console and the API show it."""

import base64

from confluent_kafka import Message as KafkaMessage

from kmqadmin.kmq import headers as h


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode(errors="replace")


def shown_letter(letter: KafkaMessage) -> dict:
    """A letter as the console and the API show it: its payload as text where
    it is UTF-8, base64 where it is not."""
    record_headers = letter.headers() or []
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


# The name kmqadmin/api/dead_letters.py still imports; remove once it imports shown_letter.
shown = shown_letter
