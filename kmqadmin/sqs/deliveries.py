"""DeleteMessage and ChangeMessageVisibility, one or a batch: markers on the
delivery a receipt handle names, written by whichever web process the
request reaches (the kmq backend's markers may come from anyone), and
applied by the queue's tracker.

DeleteMessage is an ack. ChangeMessageVisibility N moves the deadline to
now + N s; 0 gives the message back at once (redelivered, counting as a
receive), as in SQS. A handle of a delivery already redelivered or acked
names a delivery no longer open: the tracker ignores its marker, as SQS
ignores a stale handle's delete. One audit entry per request.
"""

from collections.abc import Callable
from typing import Any

from kmqadmin.console.models import Queue
from kmqadmin.console.services import audit, clients
from kmqadmin.kmq.marker_writer import MarkerWriter

from . import batches
from .caller import Caller
from .errors import SqsError, missing_parameter
from .params import Params, integer
from .receipts import Receipt, read
from .registered import kmq_queue

MAX_VISIBILITY_S = 43_200
Act = Callable[[MarkerWriter, Receipt, Params], None]


def delete_message(params: Params, caller: Caller) -> dict[str, Any]:
    return _one(params, caller, "sqs.DeleteMessage", _ack)


def delete_message_batch(params: Params, caller: Caller) -> dict[str, Any]:
    return _batch(params, caller, "sqs.DeleteMessageBatch", _ack)


def change_message_visibility(params: Params, caller: Caller) -> dict[str, Any]:
    return _one(params, caller, "sqs.ChangeMessageVisibility", _change_visibility)


def change_message_visibility_batch(params: Params, caller: Caller) -> dict[str, Any]:
    return _batch(params, caller, "sqs.ChangeMessageVisibilityBatch", _change_visibility)


def _ack(writer: MarkerWriter, receipt: Receipt, params: Params) -> None:
    writer.ack(receipt.partition, receipt.offset)


def _change_visibility(writer: MarkerWriter, receipt: Receipt, params: Params) -> None:
    seconds = integer(params, "VisibilityTimeout", 0, MAX_VISIBILITY_S)
    if seconds is None:
        raise missing_parameter("VisibilityTimeout")
    if seconds:
        writer.extend(receipt.partition, receipt.offset, seconds * 1000)
    else:
        writer.retry(receipt.partition, receipt.offset)


def _one(params: Params, caller: Caller, action: str, act: Act) -> dict[str, Any]:
    queue, _ = kmq_queue(params, action.removeprefix("sqs."))
    receipt = _receipt(params, queue)
    where = {"delivery": f"{receipt.partition}/{receipt.offset}", "key": caller.key_id}
    with audit.action(caller.user, action, queue.topic, after=where):
        act(clients.marker_writer(queue.config()), receipt, params)
    return {}


def _batch(params: Params, caller: Caller, action: str, act: Act) -> dict[str, Any]:
    queue, _ = kmq_queue(params, action.removeprefix("sqs."))
    entries = batches.entries(params.get("Entries"))
    writer, done, failed = clients.marker_writer(queue.config()), [], []
    after: dict[str, Any] = {"key": caller.key_id, "deliveries": []}
    with audit.action(caller.user, action, queue.topic, after=after) as entry:
        for found in entries:
            try:
                receipt = _receipt(found, queue)
                act(writer, receipt, found)
            except SqsError as exc:
                failed.append(batches.failure(found["Id"], exc))
                continue
            after["deliveries"].append(f"{receipt.partition}/{receipt.offset}")
            done.append({"Id": found["Id"]})
        entry.after = after
    return {"Successful": done, "Failed": failed}


def _receipt(params: Params, queue: Queue) -> Receipt:
    handle = params.get("ReceiptHandle")
    if handle is None or handle == "":
        raise missing_parameter("ReceiptHandle")
    return read(handle, queue.topic)
