"""Acknowledgements as a member queues them, and those that did not take.

An acknowledgement is queued as an Entry until the next flush; what the
broker refuses (or never answered) comes back to the caller as a Refusal,
record by record, so it can say which of its records it still owes.
"""

from dataclasses import dataclass

from confluent_kafka import Message as KafkaMessage

# (partition, offset, acknowledge type, record): no record for a gap, an
# offset acquired that no record of the fetch held.
Entry = tuple[int, int, int, KafkaMessage | None]


@dataclass(frozen=True, slots=True)
class Refusal:
    """An acknowledgement that did not take. ``unknown``: the request got no
    answer, so the broker may or may not have applied it."""

    record: KafkaMessage
    kind: int
    reason: str
    unknown: bool = False


def refusals(entries: list[Entry], reason: str, unknown: bool = False) -> list[Refusal]:
    """Every entry with a record refused for one ``reason`` (a gap has no
    caller to tell)."""
    return [Refusal(record, kind, reason, unknown) for _, _, kind, record in entries if record]
