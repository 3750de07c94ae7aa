"""ReceiveMessage: up to ten messages, long-polled for up to 20 s without a
thread (receivers.py), each in flight from then on: a kmq delivery whose
start marker the tracker redelivers after the queue's visibility timeout,
or a share delivery the broker locks for it.

Each message as SQS gives it: its MessageId (``sqs-message-id``, else the
UUID its kmq-id names, send.message_id), a ReceiptHandle naming the
delivery (receipts.py), its body and its digest, the system attributes
asked for, and the message attributes asked for, rebuilt from the record's
headers with the types they were sent with. A record no SQS client could
read (a body that is not UTF-8 text in SQS's characters, written by
another Kafka producer) is rejected to the DLQ with the reason, never
handed out garbled and never lost.
"""

import base64
import json
import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

from kmqadmin.console.models import Queue
from kmqadmin.console.services.audit import trail as audit
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kmq import QueueConfig
from kmqadmin.kmq.message import Message
from kmqadmin.sqs.actions.send import GROUP_HEADER, ID_HEADER, SENDER_HEADER, message_id
from kmqadmin.sqs.auth.caller import Caller
from kmqadmin.sqs.protocol import digests
from kmqadmin.sqs.protocol.errors import FORBIDDEN
from kmqadmin.sqs.protocol.message_attributes import TRACE_HEADER, TYPES_HEADER, Attribute
from kmqadmin.sqs.protocol.params import Params, integer, strings, visibility_timeout
from kmqadmin.sqs.receiving.receipts import Receipt
from kmqadmin.sqs.receiving.receivers import receiver
from kmqadmin.sqs.receiving.settling import check_extend, settler
from kmqadmin.sqs.registered import lookup
from kmqadmin.sqs.threads import in_thread

log = logging.getLogger(__name__)

SYSTEM_ATTRIBUTES = (
    "SentTimestamp",
    "SenderId",
    "ApproximateReceiveCount",
    "ApproximateFirstReceiveTimestamp",
    "MessageGroupId",
    "AWSTraceHeader",
)


def receive_message(params: Params, caller: Caller) -> Awaitable[dict[str, Any]]:
    """The request checked (on a pool thread); the wait for messages is the
    awaitable it returns, for the event loop."""
    queue, sqs = lookup(params)
    config = queue.config()  # reads secrets, may check access over the network
    wants = integer(params, "MaxNumberOfMessages", 1, 10) or 1
    wait_s = integer(params, "WaitTimeSeconds", 0, 20)
    visibility_s = visibility_timeout(params)
    if visibility_s:
        check_extend(config, visibility_s)
    asked = Asked(
        _asked(params, "AttributeNames", "MessageSystemAttributeNames"),
        strings(params, "MessageAttributeNames"),
        visibility_s,
    )
    if wait_s is None:
        wait_s = sqs.receive_message_wait_time_seconds
    return _received(queue, config, wants, wait_s, asked, caller)


@dataclass(frozen=True, slots=True)
class Asked:
    """What a receive asks for besides messages."""

    system: set[str]  # system attributes
    attributes: list[str]  # message attributes, as MessageAttributeNames gives them
    visibility_s: int | None  # its own VisibilityTimeout


async def _received(
    queue: Queue, config: QueueConfig, wants: int, wait_s: int, asked: Asked, caller: Caller
) -> dict[str, Any]:
    got = await receiver(config).receive(wants, wait_s)
    if not got:
        return {}
    try:
        messages = await in_thread(_handed_out, queue, config, got, asked.visibility_s, caller)
        now = str(now_ms())
        return {
            "Messages": [
                _rendered(queue.topic, m, asked.system, asked.attributes, now) for m in messages
            ]
        }
    except BaseException:  # the client hung up, or Kafka or the audit log failed: not given
        receiver(config).release(got)
        raise


def _handed_out(
    queue: Queue,
    config: QueueConfig,
    got: list[Message],
    visibility_s: int | None,
    caller: Caller,
) -> list[Message]:
    """The messages an SQS client can read; the others rejected to the DLQ.
    A VisibilityTimeout of the request's own moves their deadlines. (The
    settler is taken only when needed: it asks whether Kafka answers.)"""
    readable = []
    for message in got:
        if (reason := _unreadable(message)) is None:
            readable.append(message)
        else:
            log.warning(
                "%s/%d/%d rejected to the DLQ: %s",
                queue.topic,
                message.partition,
                message.offset,
                reason,
            )
            settler(config).reject([_receipt(queue, message)], reason)
    if visibility_s is not None and readable:
        receipts, settle = [_receipt(queue, m) for m in readable], settler(config)
        if visibility_s:
            settle.extend(receipts, visibility_s)
        else:
            settle.release(receipts)
    ids = [f"{m.partition}/{m.offset}" for m in readable]
    audit.record(
        caller.user,
        "sqs.ReceiveMessage",
        queue.topic,
        after={"key": caller.key_id, "deliveries": ids},
    )
    return readable


def _receipt(queue: Queue, message: Message) -> Receipt:
    return Receipt(queue.topic, message.partition, message.offset, message.delivery_count)


def _unreadable(message: Message) -> str | None:
    try:
        body = (message.value or b"").decode()
    except UnicodeDecodeError:
        return "the body is not UTF-8 text, which an SQS client cannot receive"
    if not body or FORBIDDEN.search(body):
        return "the body is empty or has characters SQS does not carry"
    return None


def _rendered(
    topic: str, message: Message, system: set[str], wanted: list[str], now: str
) -> dict[str, Any]:
    """SQS's shape of it. ApproximateFirstReceiveTimestamp is known for a
    first delivery (``now``) only: a redelivery's first receive is in no
    record, so it is left out rather than made up."""
    headers = {name: value or b"" for name, value in message.headers}
    body = (message.value or b"").decode()
    rendered: dict[str, Any] = {
        "MessageId": headers[ID_HEADER].decode(errors="replace")
        if ID_HEADER in headers
        else message_id(message.id),
        "ReceiptHandle": Receipt(
            topic, message.partition, message.offset, message.delivery_count
        ).handle(),
        "MD5OfBody": digests.of_body(body),
        "Body": body,
    }
    values = {
        "SentTimestamp": str(message.timestamp),
        "SenderId": headers.get(SENDER_HEADER, b"").decode(errors="replace"),
        "ApproximateReceiveCount": str(message.delivery_count),
        "ApproximateFirstReceiveTimestamp": now if message.delivery_count == 1 else "",
        "MessageGroupId": headers.get(GROUP_HEADER, b"").decode(errors="replace"),
        "AWSTraceHeader": headers.get(TRACE_HEADER, b"").decode(errors="replace"),
    }
    shown = {name: values[name] for name in system if values.get(name)}
    if shown:
        rendered["Attributes"] = shown
    attributes = _attributes(headers, wanted)
    if attributes:
        rendered["MD5OfMessageAttributes"] = digests.of_attributes(attributes)
        rendered["MessageAttributes"] = {name: _shape(a) for name, a in attributes.items()}
    return rendered


def _asked(params: Params, *names: str) -> set[str]:
    asked = {name for key in names for name in strings(params, key)}
    return set(SYSTEM_ATTRIBUTES) if "All" in asked else asked & set(SYSTEM_ATTRIBUTES)


def _attributes(headers: dict[str, bytes], wanted: list[str]) -> dict[str, Attribute]:
    """The attributes sent with the message that ``wanted`` names (All,
    ``.*``, ``prefix.*`` or names)."""
    if not wanted or TYPES_HEADER not in headers:
        return {}
    try:
        types = json.loads(headers[TYPES_HEADER])
    except (ValueError, RecursionError):  # another producer's header of that name
        return {}
    if not isinstance(types, dict):
        return {}
    return {
        name: Attribute(str(kind), headers[name])
        for name, kind in types.items()
        if name in headers and _wanted(name, wanted)
    }


def _wanted(name: str, wanted: list[str]) -> bool:
    for pattern in wanted:
        if pattern in ("All", ".*") or pattern == name:
            return True
        if pattern.endswith(".*") and name.startswith(pattern[:-1]):
            return True
    return False


def _shape(attribute: Attribute) -> dict[str, str]:
    if attribute.is_binary:
        return {
            "DataType": attribute.data_type,
            "BinaryValue": base64.b64encode(attribute.value).decode(),
        }
    return {
        "DataType": attribute.data_type,
        "StringValue": attribute.value.decode(errors="replace"),
    }
