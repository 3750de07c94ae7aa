"""What every batch action (SendMessageBatch, DeleteMessageBatch,
ChangeMessageVisibilityBatch) checks of its entries as a whole, and how a
refused entry is answered among the others."""

import re
from typing import Any

from kmqadmin.sqs.protocol.errors import SqsError, invalid_parameter_value

MAX_ENTRIES = 10
ID = re.compile(r"[\w-]{1,80}", re.ASCII)


def entries(raw: Any, action: str) -> list[dict[str, Any]]:
    """The entries of SQS action ``action``'s batch, if SQS would take it
    at all: 1 to 10 of them, each with an Id of its own."""
    if not raw:
        raise SqsError(
            "EmptyBatchRequest",
            f"There should be at least one {action}RequestEntry in the request.",
            code="AWS.SimpleQueueService.EmptyBatchRequest",
        )
    if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
        raise invalid_parameter_value("Entries must be a list of objects.")
    if len(raw) > MAX_ENTRIES:
        raise SqsError(
            "TooManyEntriesInBatchRequest",
            f"Maximum number of entries per request are {MAX_ENTRIES}. You have sent {len(raw)}.",
            code="AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
        )
    ids = [entry.get("Id") for entry in raw]
    if not all(isinstance(i, str) and ID.fullmatch(i) for i in ids):
        raise SqsError(
            "InvalidBatchEntryId",
            "A batch entry id can only contain alphanumeric characters, hyphens and "
            "underscores. It can be at most 80 letters long.",
            code="AWS.SimpleQueueService.InvalidBatchEntryId",
        )
    if len(set(ids)) != len(ids):
        repeated = next(i for n, i in enumerate(ids) if i in ids[:n])  # the first repeat
        raise SqsError(
            "BatchEntryIdsNotDistinct",
            f"Id {repeated} repeated.",
            code="AWS.SimpleQueueService.BatchEntryIdsNotDistinct",
        )
    return raw


def failure(entry_id: str, error: SqsError) -> dict[str, Any]:
    return {
        "Id": entry_id,
        "SenderFault": error.sender,
        "Code": error.code,
        "Message": error.message,
    }
