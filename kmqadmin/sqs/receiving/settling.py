"""Settling deliveries (delete, give back, hold longer, dead-letter) on
either backend, for receive.py and deliveries.py.

kmq: a marker on the delivery, which any web process can write (the receipt
names partition and offset) and the tracker applies. A marker for a delivery
already redelivered settles nothing, as SQS ignores a stale handle.

share: only the consumer that acquired a record can acknowledge it, so the
receiver that handed it out does it (receivers.py), on its own thread. A
receipt handed out by another web process cannot be settled here, and one
whose lock ran out is the broker's again: each is refused with the reason
(ReceiptHandleIsInvalid; kombu forgets such a delivery), and the message
comes back when its lock runs out.
"""

from collections.abc import Sequence
from typing import Protocol

from kmqadmin.console.services.clusters import clients
from kmqadmin.kafka.client.clock import to_ms, to_s
from kmqadmin.kmq import QueueConfig
from kmqadmin.sqs.protocol.errors import SqsError, invalid_parameter_value
from kmqadmin.sqs.receiving.receipts import Receipt
from kmqadmin.sqs.receiving.receivers import receiver

# Per receipt: None when settled, else why not.
Refusals = list[str | None]


class Settler(Protocol):
    def ack(self, receipts: Sequence[Receipt]) -> Refusals: ...
    def release(self, receipts: Sequence[Receipt]) -> Refusals: ...
    def extend(self, receipts: Sequence[Receipt], seconds: int) -> Refusals: ...
    def reject(self, receipts: Sequence[Receipt], reason: str) -> Refusals: ...


def settler(config: QueueConfig) -> Settler:
    return Held(config) if config.backend == "share" else Markers(config)


def check_extend(config: QueueConfig, seconds: int) -> None:
    """A share lock is renewed for the group's lock duration, the queue's
    VisibilityTimeout: no change may ask for more."""
    lock_s = int(to_s(config.message_timeout_ms))
    if config.backend == "share" and seconds > lock_s:
        raise invalid_parameter_value(
            f"Value {seconds} for parameter VisibilityTimeout is invalid. Reason: a "
            f"share-group queue holds a message for its own VisibilityTimeout "
            f"({lock_s} s) at most per change; change it again to hold it longer."
        )


def refused(reason: str) -> SqsError:
    return SqsError("ReceiptHandleIsInvalid", reason)


class Markers:
    """A kmq queue's deliveries: one wait for the broker per request."""

    def __init__(self, config: QueueConfig) -> None:
        self._writer = clients.marker_writer(config)

    def ack(self, receipts: Sequence[Receipt]) -> Refusals:
        self._writer.ack_all(_deliveries(receipts))
        return [None] * len(receipts)

    def release(self, receipts: Sequence[Receipt]) -> Refusals:
        self._writer.retry_all(_deliveries(receipts))
        return [None] * len(receipts)

    def extend(self, receipts: Sequence[Receipt], seconds: int) -> Refusals:
        self._writer.extend_all(_deliveries(receipts), to_ms(seconds))
        return [None] * len(receipts)

    def reject(self, receipts: Sequence[Receipt], reason: str) -> Refusals:
        self._writer.reject_all(_deliveries(receipts), reason)
        return [None] * len(receipts)


def _deliveries(receipts: Sequence[Receipt]) -> list[tuple[int, int]]:
    return [(r.partition, r.offset) for r in receipts]


class Held:
    """A share queue's deliveries, settled by the receiver holding them."""

    def __init__(self, config: QueueConfig) -> None:
        self._config = config
        self._receiver = receiver(config)

    def ack(self, receipts: Sequence[Receipt]) -> Refusals:
        return self._receiver.settle("ack", receipts)

    def release(self, receipts: Sequence[Receipt]) -> Refusals:
        return self._receiver.settle("release", receipts)

    def extend(self, receipts: Sequence[Receipt], seconds: int) -> Refusals:
        check_extend(self._config, seconds)
        return self._receiver.settle("extend", receipts, ms=to_ms(seconds))

    def reject(self, receipts: Sequence[Receipt], reason: str) -> Refusals:
        return self._receiver.settle("reject", receipts, reason=reason)
