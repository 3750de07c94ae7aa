"""Partitions and offsets as requests spell them: ASCII digits within
Kafka's bounds (int32, int64). int() alone takes " 1", "+1", "1_0" and other
scripts' digits, and a number past the bounds reaches librdkafka, which
raises OverflowError: a 500 instead of a 400."""

import re

from kmqadmin.kafka.client.bounds import MAX_OFFSET, MAX_PARTITION

__all__ = ["MAX_OFFSET", "MAX_PARTITION", "number"]

_DIGITS = re.compile(r"[0-9]{1,19}")


def number(text: str, most: int) -> int:
    """``text`` as a whole number from 0 to ``most``; ValueError saying so."""
    if _DIGITS.fullmatch(text) is None or int(text) > most:
        raise ValueError(f"expected a whole number from 0 to {most}")
    return int(text)
