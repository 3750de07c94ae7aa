"""The share deliveries a receiver handed out, held until they are settled
or their lock runs out.

On a share queue only the consumer that acquired a record can acknowledge
it, so the receiver that handed a message out keeps it, and settles it on
its own thread for any request of this process (a Settling job). A receipt
it does not hold, or whose lock ran out, is refused with the reason.
"""

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from kmqadmin.kafka.client.clock import to_s
from kmqadmin.kmq import QueueClient
from kmqadmin.kmq.locks import AcksRefused, LockExpired
from kmqadmin.kmq.message import Message
from kmqadmin.sqs.receiving.receipts import Receipt

log = logging.getLogger(__name__)

NOT_HELD = (
    "it was not received through this web process, or was settled already: a share-group "
    "queue's message is acknowledged by the process that received it, and comes back when "
    "its lock runs out"
)
LOCK_GONE = "its lock ran out, so the broker delivers it again"


@dataclass(eq=False)
class Settling:
    """A request's acknowledgements of share deliveries, for the receiver's
    thread; ``done`` gets a reason per receipt (None: settled)."""

    kind: str  # ack, release, extend, reject
    receipts: Sequence[Receipt]
    ms: int = 0
    reason: str = ""
    done: Future = field(default_factory=Future)


class ShareHolds:
    """By (partition, offset): the message handed out, and when its lock
    runs out (time.monotonic()). Used by the receiver's thread alone."""

    def __init__(self, lock_ms: int) -> None:
        self._lock_ms = lock_ms
        self._held: dict[tuple[int, int], tuple[Message, float]] = {}

    def hold(self, messages: list[Message]) -> None:
        """Handed out now: held for the group's lock duration."""
        until = time.monotonic() + to_s(self._lock_ms)
        self._held.update({(m.partition, m.offset): (m, until) for m in messages})

    def drop(self, messages: list[Message]) -> None:
        for m in messages:
            self._held.pop((m.partition, m.offset), None)

    def any(self) -> bool:
        """Whether a delivery handed out may still be settled: the client
        stays a member until none is (leaving would give them back)."""
        now = time.monotonic()
        self._held = {k: held for k, held in self._held.items() if held[1] > now}
        return bool(self._held)

    def settle(self, client: QueueClient, job: Settling) -> None:
        """One request's acknowledgements, then one wait for the broker."""
        reasons: list[str | None] = []
        acted: dict[int, Message] = {}
        for i, r in enumerate(job.receipts):
            held = self._held.get((r.partition, r.offset))
            if held is None or held[0].delivery_count != r.delivery:
                reasons.append(NOT_HELD)
                continue
            message = held[0]
            try:
                _act(client, job, message)
            except LockExpired:
                reasons.append(LOCK_GONE)
                self.drop([message])
                continue
            reasons.append(None)
            acted[i] = message
            if job.kind == "extend":  # renewed for the group's whole lock duration
                self.hold([message])
            else:
                self.drop([message])
        late = {id(m) for m, _ in refusals(client.flush)}
        for i, message in acted.items():
            if id(message) in late:
                reasons[i] = LOCK_GONE
        job.done.set_result(reasons)


def refusals(call: Callable[..., None], *args: object) -> list[tuple[Message, str]]:
    """What the broker refused of ``call``'s acknowledgements (a share
    client's: the kmq backend refuses none)."""
    try:
        call(*args)
    except AcksRefused as exc:
        log.warning("%s", exc)
        return exc.refused
    return []


def _act(client: QueueClient, job: Settling, message: Message) -> None:
    if job.kind == "ack":
        client.ack(message)
    elif job.kind == "release":
        client.release(message)
    elif job.kind == "extend":
        client.extend(message, job.ms)
    else:
        client.reject(message, job.reason)
