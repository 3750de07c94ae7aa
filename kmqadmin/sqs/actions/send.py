"""SendMessage and SendMessageBatch: each message checked as SQS checks it,
then written to the queue topic as a queue producer writes it, and answered
once the broker has it.

The MessageId is a UUID named by the message's kmq-id
(``<topic>/<partition>/<offset>``, the address the console shows it under;
the audit entry of its send pairs the two): the same on every receive, and, like SQS's, usable as a
batch entry Id, which a "/" is not (clients delete a batch by MessageId). A
delayed message (DelaySeconds, the message's or the queue's) is a schedule
on the queue's schedules topic, fired onto the queue by its scheduler when
due: it has no coordinates yet, so its MessageId is a random UUID it
carries in ``sqs-message-id``, and the queue is switched to taking
delayed sends (its topic and scheduler) the first time one comes.
MessageGroupId, where given, is the record's key, so one group's messages
share a partition and keep their order. The sending key is SenderId
(``sqs-sender-id``). A batch's entries are checked one by one: a bad entry is
answered in Failed with its own code and the others are still sent. One
audit entry per request names the key and every message it wrote.
"""

import time
import uuid
from dataclasses import dataclass
from typing import Any

from confluent_kafka import KafkaException

from kmqadmin.console.models import Queue, SqsQueue
from kmqadmin.console.services.audit import trail as audit
from kmqadmin.console.services.clusters import clients
from kmqadmin.kmq import QueueConfig
from kmqadmin.kmq import headers as h
from kmqadmin.kmq.producer import QueueProducer
from kmqadmin.scheduler.client import ScheduleClient
from kmqadmin.sqs.auth.caller import Caller
from kmqadmin.sqs.protocol import batches, digests, message_attributes
from kmqadmin.sqs.protocol.errors import (
    FORBIDDEN,
    SqsError,
    invalid_parameter_value,
    missing_parameter,
    service_unavailable,
)
from kmqadmin.sqs.protocol.message_attributes import Attribute
from kmqadmin.sqs.protocol.params import Params
from kmqadmin.sqs.registered import lookup

MAX_BATCH_BYTES = 1_048_576
FLUSH_S = 10.0
GROUP_HEADER = "sqs-message-group-id"
ID_HEADER = "sqs-message-id"
SENDER_HEADER = "sqs-sender-id"  # the access key that sent it: SQS's SenderId
_IDS = uuid.uuid5(uuid.NAMESPACE_DNS, "sqs.kmqadmin")


def message_id(kmq_id: str) -> str:
    """The MessageId SQS clients see for the message ``kmq_id`` names."""
    return str(uuid.uuid5(_IDS, kmq_id))


@dataclass(frozen=True, slots=True)
class Outgoing:
    body: str
    attributes: dict[str, Attribute]
    group: str | None
    delay_s: int
    uuid: str  # its MessageId when delayed
    sender: str  # the access key sending it
    system: dict[str, Attribute]  # MessageSystemAttributes: AWSTraceHeader, if given

    def headers(self) -> dict[str, bytes]:
        found = dict(message_attributes.as_headers(self.attributes))
        found[SENDER_HEADER] = self.sender.encode()
        if trace := self.system.get(message_attributes.TRACE):
            found[message_attributes.TRACE_HEADER] = trace.value
        if self.group is not None:
            found[GROUP_HEADER] = self.group.encode()
        if self.delay_s:
            found[ID_HEADER] = self.uuid.encode()
        return found

    @property
    def key(self) -> bytes | None:
        return None if self.group is None else self.group.encode()

    def size(self) -> int:
        """Its bytes as a record: value, key and headers."""
        key = len(self.key or b"")
        headers = sum(len(k) + len(v) for k, v in self.headers().items())
        return len(self.body.encode()) + key + headers

    def answer(self, written: str) -> dict[str, Any]:
        """``written``: its kmq-id, or its UUID when delayed."""
        sent = {
            "MessageId": written if self.delay_s else message_id(written),
            "MD5OfMessageBody": digests.of_body(self.body),
        }
        if (attributes := digests.of_attributes(self.attributes)) is not None:
            sent["MD5OfMessageAttributes"] = attributes
        if (system := digests.of_attributes(self.system)) is not None:
            sent["MD5OfMessageSystemAttributes"] = system
        return sent


def send_message(params: Params, caller: Caller) -> dict[str, Any]:
    queue, sqs = lookup(params)
    message = checked(params, sqs, clients.record_limit(queue.config()), caller)
    [written] = _write(queue, [message], caller)
    if isinstance(written, SqsError):
        raise written
    return message.answer(written)


def send_message_batch(params: Params, caller: Caller) -> dict[str, Any]:
    queue, sqs = lookup(params)
    entries = _entries(params.get("Entries"))
    limit = clients.record_limit(queue.config())
    failed, ready = [], []
    for entry in entries:
        try:
            ready.append((entry["Id"], checked(entry, sqs, limit, caller)))
        except SqsError as exc:
            failed.append(batches.failure(entry["Id"], exc))
    successful = []
    written = _write(queue, [message for _, message in ready], caller)
    for (entry_id, message), result in zip(ready, written, strict=True):
        if isinstance(result, SqsError):  # Kafka's fault: the others still answered
            failed.append(batches.failure(entry_id, result))
        else:
            successful.append({"Id": entry_id, **message.answer(result)})
    return {"Successful": successful, "Failed": failed}


def checked(params: Params, sqs: SqsQueue, record_limit: int, caller: Caller) -> Outgoing:
    """One message as SQS would take it, or the error SQS gives. It must
    also fit a record of the queue topic (``record_limit`` bytes of value,
    key and headers), which may take less than SQS's 1 MiB."""
    body = params.get("MessageBody")
    if not isinstance(body, str) or not body:
        raise missing_parameter("MessageBody")
    if FORBIDDEN.search(body):
        raise SqsError(
            "InvalidMessageContents",
            "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to "
            "#xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF",
        )
    attributes = message_attributes.given(params.get("MessageAttributes"))
    size = len(body.encode()) + sum(a.size(n) for n, a in attributes.items())
    if size > sqs.maximum_message_size:
        raise invalid_parameter_value(
            "One or more parameters are invalid. Reason: Message must be shorter than "
            f"{sqs.maximum_message_size} bytes."
        )
    delay = params.get("DelaySeconds")
    if delay is not None and (type(delay) is not int or not 0 <= delay <= 900):
        raise invalid_parameter_value(
            f"Value {str(delay)[:40]} for parameter DelaySeconds is invalid. "
            "Reason: DelaySeconds must be >= 0 and <= 900."
        )
    if params.get("MessageDeduplicationId") is not None:
        raise invalid_parameter_value(
            "The request include parameter that is not valid for this queue type: "
            "MessageDeduplicationId applies to FIFO queues, which this endpoint does not offer."
        )
    group = params.get("MessageGroupId")
    if group is not None and (not isinstance(group, str) or not batches.ID.fullmatch(group)):
        raise invalid_parameter_value("MessageGroupId must be 1 to 80 letters, digits, _ or -.")
    delay_s = delay if delay is not None else sqs.delay_seconds
    system = message_attributes.system(params.get("MessageSystemAttributes"))
    message = Outgoing(
        body,
        attributes,
        group,
        delay_s,
        uuid=str(uuid.uuid4()),
        sender=caller.key_id,
        system=system,
    )
    if (record := message.size()) > record_limit:
        raise invalid_parameter_value(
            f"One or more parameters are invalid. Reason: the message is {record} bytes as a "
            f"Kafka record; the queue topic takes at most {record_limit}."
        )
    return message


def _entries(raw: Any) -> list[dict[str, Any]]:
    entries = batches.entries(raw, "SendMessageBatch")
    size = sum(len(str(entry.get("MessageBody", "")).encode()) for entry in entries)
    if size > MAX_BATCH_BYTES:
        raise SqsError(
            "BatchRequestTooLong",
            f"Batch requests cannot be longer than {MAX_BATCH_BYTES} bytes. "
            f"You have sent {size} bytes.",
            code="AWS.SimpleQueueService.BatchRequestTooLong",
        )
    return entries


def _write(queue: Queue, messages: list[Outgoing], caller: Caller) -> list[str | SqsError]:
    """Each written and confirmed, in order: its kmq-id (its UUID if
    delayed), or the error Kafka gave it (503: written or not, the client
    should look before it sends again), so one failure does not hide what
    the others did."""
    if not messages:
        return []
    after: dict[str, Any] = {"key": caller.key_id}
    with audit.action(caller.user, "sqs.SendMessage", queue.topic, after=after) as entry:
        if any(m.delay_s for m in messages) and not queue.delayed_sends:
            queue = _take_delayed_sends(queue)
            after["delayed sends"] = "switched on"
        config = queue.config()
        results: list[str | SqsError] = [""] * len(messages)
        _send_now(clients.producer(config), queue.topic, messages, results)
        later = _send_later(config, queue.topic, messages, results)
        if later is not None:
            try:
                later.flush(FLUSH_S)
            except KafkaException as exc:
                pairs = zip(messages, results, strict=True)
                results = [_unconfirmed(exc) if m.delay_s else r for m, r in pairs]
        entry.after = {**after, "messages": _shown(messages, results)}
    return results


def _shown(messages: list[Outgoing], results: list[str | SqsError]) -> dict[str, str]:
    """For the audit log: each MessageId a client was given (or the entry's
    place, unconfirmed) with the kmq-id the console finds the message by."""
    shown = {}
    for i, (message, result) in enumerate(zip(messages, results, strict=True)):
        if isinstance(result, SqsError):
            shown[f"#{i}"] = f"unconfirmed: {result.message}"
        elif message.delay_s:
            shown[result] = f"delayed {message.delay_s} s"
        else:
            shown[message_id(result)] = result
    return shown


def _unconfirmed(error: Exception) -> SqsError:
    return service_unavailable(
        f"Kafka did not confirm the message ({error}): it may be on the queue or not; look "
        "in the console before sending it again."
    )


def _send_now(
    producer: QueueProducer, topic: str, messages: list[Outgoing], results: list[str | SqsError]
) -> None:
    """The undelayed ones, sent together with one wait: each one's kmq-id,
    or why it is unconfirmed, at its place in ``results``."""
    now = [(i, m) for i, m in enumerate(messages) if not m.delay_s]
    if not now:
        return
    sent = [(m.body.encode(), m.key, m.headers()) for _, m in now]
    for (i, _), outcome in zip(now, producer.send_all_confirmed(sent), strict=True):
        if isinstance(outcome, Exception):
            results[i] = _unconfirmed(outcome)
        else:
            results[i] = h.message_id(topic, *outcome)


def _send_later(
    config: QueueConfig, topic: str, messages: list[Outgoing], results: list[str | SqsError]
) -> ScheduleClient | None:
    """The delayed ones scheduled, to be confirmed together by one flush;
    the schedule client, or None when there were none."""
    later = None
    for i, message in enumerate(messages):
        if not message.delay_s:
            continue
        later = later or clients.schedule_client(config.scheduler_config())
        due, value = time.time() + message.delay_s, message.body.encode()
        try:
            later.schedule(message.uuid, due, topic, value, message.key, message.headers())
            results[i] = message.uuid
        except KafkaException as exc:
            results[i] = _unconfirmed(exc)
    return later


def _take_delayed_sends(queue: Queue) -> Queue:
    """The queue taking delayed sends, its schedules topic made; the
    workers start its scheduler on their next look at the registry, and it
    fires what is due from then on. Read afresh: ``queue`` is remembered."""
    taking = Queue.objects.select_related("cluster").get(pk=queue.pk)
    taking.delayed_sends = True
    taking.save(update_fields=["delayed_sends"])
    taking.config().ensure_topics(taking.partitions)
    return taking
