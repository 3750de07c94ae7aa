"""DeleteMessage and ChangeMessageVisibility, one or a batch, settled as
the queue's backend settles a delivery (settling.py): on a kmq queue by
whichever web process the request reaches, on a share queue by the one that
received the message.

DeleteMessage is an ack. ChangeMessageVisibility N moves the deadline to
now + N s; 0 gives the message back at once (redelivered, counting as a
receive), as in SQS. A kmq handle of a delivery already redelivered or
acked names a delivery no longer open: the tracker ignores its marker, as
SQS ignores a stale handle's delete. A share handle that cannot be settled
is refused with the reason. One audit entry per request.
"""

from collections.abc import Callable, Sequence
from itertools import groupby
from typing import Any

from kmqadmin.console.models import Queue
from kmqadmin.console.services.audit import trail as audit
from kmqadmin.sqs.auth.caller import Caller
from kmqadmin.sqs.protocol import batches
from kmqadmin.sqs.protocol.errors import SqsError, missing_parameter
from kmqadmin.sqs.protocol.params import Params, visibility_timeout
from kmqadmin.sqs.receiving.receipts import Receipt, read
from kmqadmin.sqs.receiving.settling import Refusals, Settler, refused, settler
from kmqadmin.sqs.registered import lookup

# What an entry asks for: ("ack" | "release" | "extend", seconds).
Act = Callable[[Params], tuple[str, int]]


def delete_message(params: Params, caller: Caller) -> dict[str, Any]:
    return _one(params, caller, "sqs.DeleteMessage", _ack)


def delete_message_batch(params: Params, caller: Caller) -> dict[str, Any]:
    return _batch(params, caller, "sqs.DeleteMessageBatch", _ack)


def change_message_visibility(params: Params, caller: Caller) -> dict[str, Any]:
    return _one(params, caller, "sqs.ChangeMessageVisibility", _change_visibility)


def change_message_visibility_batch(params: Params, caller: Caller) -> dict[str, Any]:
    return _batch(params, caller, "sqs.ChangeMessageVisibilityBatch", _change_visibility)


def _ack(params: Params) -> tuple[str, int]:
    return "ack", 0


def _change_visibility(params: Params) -> tuple[str, int]:
    seconds = visibility_timeout(params)
    if seconds is None:
        raise missing_parameter("VisibilityTimeout")
    return ("extend", seconds) if seconds else ("release", 0)


def _one(params: Params, caller: Caller, action: str, act: Act) -> dict[str, Any]:
    queue, _ = lookup(params)
    receipt = _receipt(params, queue)
    kind, seconds = act(params)
    where = {"delivery": f"{receipt.partition}/{receipt.offset}", "key": caller.key_id}
    with audit.action(caller.user, action, queue.topic, after=where):
        [reason] = _apply(settler(queue.config()), kind, seconds, [receipt])
        if reason is not None:
            raise refused(f"The receipt handle cannot be used: {reason}.")
    return {}


def _batch(params: Params, caller: Caller, action: str, act: Act) -> dict[str, Any]:
    queue, _ = lookup(params)
    asked, failed = [], []
    for found in batches.entries(params.get("Entries"), action.removeprefix("sqs.")):
        try:
            asked.append((found["Id"], _receipt(found, queue), *act(found)))
        except SqsError as exc:
            failed.append(batches.failure(found["Id"], exc))
    done: list[dict[str, str]] = []
    after: dict[str, Any] = {"key": caller.key_id, "deliveries": []}
    with audit.action(caller.user, action, queue.topic, after=after) as entry:
        settle = settler(queue.config())
        by_kind = lambda a: (a[2], a[3])  # noqa: E731
        for (kind, seconds), same in groupby(sorted(asked, key=by_kind), key=by_kind):
            group = list(same)
            try:
                reasons = _apply(settle, kind, seconds, [r for _, r, _, _ in group])
            except SqsError as exc:  # a VisibilityTimeout this queue cannot give
                failed.extend(batches.failure(entry_id, exc) for entry_id, *_ in group)
                continue
            for (entry_id, receipt, _, _), reason in zip(group, reasons, strict=True):
                if reason is None:
                    after["deliveries"].append(f"{receipt.partition}/{receipt.offset}")
                    done.append({"Id": entry_id})
                else:
                    failed.append(batches.failure(entry_id, refused(reason)))
        entry.after = after
    return {"Successful": done, "Failed": failed}


def _apply(settle: Settler, kind: str, seconds: int, receipts: Sequence[Receipt]) -> Refusals:
    if kind == "ack":
        return settle.ack(receipts)
    if kind == "release":
        return settle.release(receipts)
    return settle.extend(receipts, seconds)


def _receipt(params: Params, queue: Queue) -> Receipt:
    handle = params.get("ReceiptHandle")
    if handle is None or handle == "":
        raise missing_parameter("ReceiptHandle")
    return read(handle, queue.topic)
