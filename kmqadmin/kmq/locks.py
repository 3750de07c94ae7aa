"""What a worker is told when an acknowledgement cannot take.

On a share queue the broker holds each delivered record under a lock for the
queue's message timeout; once the lock is gone the record belongs to the
next delivery, and an ack, release, reject or extend of the old one is
refused. The client raises instead of letting the worker believe the work
was recorded: LockExpired for one message (found before anything was sent,
or refused by the broker on extend), AcksRefused for the acknowledgements
of a batch or a flush the broker refused, each named.

On the kmq backend nothing is refused: an ack is an end marker, and one
that reaches the tracker after the message was redelivered settles nothing
(the copy is delivered as usual); see docs/queue.md, "Late acknowledgements".
"""

from collections.abc import Sequence

from kmqadmin.kafka.client.record import UndecodableRecord
from kmqadmin.kmq.message import Message


def describe(message: Message) -> str:
    """topic/partition/offset and the kmq-id, for an error a person reads."""
    try:
        kmq_id = message.id
    except (UndecodableRecord, ValueError):
        kmq_id = "-"
    return f"{message.topic}/{message.partition}/{message.offset} (kmq-id {kmq_id})"


class LockExpired(RuntimeError):
    """The message's lock ran out before the acknowledgement: the broker has
    taken it back and will deliver it again."""

    def __init__(self, message: Message, doing: str, detail: str = "") -> None:
        self.message = message
        more = f" ({detail})" if detail else ""
        super().__init__(
            f"{doing} {describe(message)}: its lock expired{more}; the broker delivers it again"
        )


class AcksRefused(RuntimeError):
    """Acknowledgements the broker refused or never answered; ``refused``
    holds (message, reason) for each. The others of the batch took."""

    def __init__(self, refused: Sequence[tuple[Message, str]]) -> None:
        self.refused = list(refused)
        shown = "; ".join(f"{describe(m)}: {why}" for m, why in self.refused[:5])
        more = f"; and {len(self.refused) - 5} more" if len(self.refused) > 5 else ""
        super().__init__(f"{len(self.refused)} acknowledgements did not take: {shown}{more}")
