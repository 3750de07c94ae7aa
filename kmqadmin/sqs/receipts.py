"""Receipt handles: what a ReceiveMessage hands out with each message and a
DeleteMessage or ChangeMessageVisibility brings back.

A handle names the delivery itself (queue, partition, offset, delivery
count), so any web process can act on it: the kmq backend's acks and
extensions are markers any process may write. It is signed with Django's
signing (SECRET_KEY, a salt of its own), so a client cannot forge one for
a message it was never given or alter the delivery it names.
"""

from dataclasses import astuple, dataclass

from django.core import signing

from .errors import SqsError

SALT = "kmqadmin.sqs.receipt"


@dataclass(frozen=True, slots=True)
class Receipt:
    queue: str
    partition: int
    offset: int
    delivery: int  # 1 for the first delivery, 2 for the first redelivery...

    def handle(self) -> str:
        return signing.dumps(list(astuple(self)), salt=SALT, compress=True)


def read(handle: object, queue: str) -> Receipt:
    """The receipt ``handle`` carries, if it is one of ours for ``queue``."""
    try:
        fields = signing.loads(handle, salt=SALT) if isinstance(handle, str) else None
    except signing.BadSignature:
        fields = None
    if (
        not isinstance(fields, list)
        or len(fields) != 4
        or fields[0] != queue
        or not all(type(n) is int and n >= 0 for n in fields[1:])
    ):
        raise SqsError(
            "ReceiptHandleIsInvalid",
            f'The input receipt handle "{str(handle)[:200]}" is not a valid receipt handle.',
        )
    return Receipt(*fields)
