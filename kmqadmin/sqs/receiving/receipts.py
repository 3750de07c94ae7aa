"""Receipt handles: what a ReceiveMessage hands out with each message and a
DeleteMessage or ChangeMessageVisibility brings back.

A handle names the delivery itself (queue, partition, offset, delivery
count), so any web process can act on it: the kmq backend's acks and
extensions are markers any process may write. It is the four fields as
text (``partition.offset.delivery.queue``; a queue name has no ":"),
signed with Django's signing (SECRET_KEY, a salt of its own), so a client
cannot forge one for a message it was never given or alter the delivery it
names. Plain text, not signing's compressed JSON, which was half of a
receive's own work (it signs up to ten).
"""

from dataclasses import dataclass

from django.core import signing

from kmqadmin.sqs.protocol.errors import SqsError

SALT = "kmqadmin.sqs.receipt"


@dataclass(frozen=True, slots=True)
class Receipt:
    queue: str
    partition: int
    offset: int
    delivery: int  # 1 for the first delivery, 2 for the first redelivery...

    def handle(self) -> str:
        return signing.Signer(salt=SALT).sign(
            f"{self.partition}.{self.offset}.{self.delivery}.{self.queue}"
        )


def read(handle: object, queue: str) -> Receipt:
    """The receipt ``handle`` carries, if it is one of ours for ``queue``."""
    try:
        signed = signing.Signer(salt=SALT).unsign(handle) if isinstance(handle, str) else ""
    except signing.BadSignature:
        signed = ""
    fields = signed.split(".", 3)
    numbers = fields[:3]
    if len(fields) != 4 or fields[3] != queue or not all(n.isdigit() for n in numbers):
        raise SqsError(
            "ReceiptHandleIsInvalid",
            f'The input receipt handle "{str(handle)[:200]}" is not a valid receipt handle.',
        )
    partition, offset, delivery = (int(n) for n in numbers)
    return Receipt(queue, partition, offset, delivery)
