"""What a person or a service can do to a queue's messages, audited.

Each action records its intent in the audit log, writes to Kafka, waits for
the broker and records the outcome, so the log never claims an effect the
broker did not take, nor misses one it did.
"""

from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

from confluent_kafka import KafkaError
from confluent_kafka import Message as KafkaMessage
from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser

from kmqadmin.console.models import AuditEntry, Queue
from kmqadmin.console.services.audit import trail as audit
from kmqadmin.console.services.clusters import clients
from kmqadmin.console.services.clusters.availability import KafkaAway
from kmqadmin.console.services.conflict import Conflict
from kmqadmin.console.services.missing import Missing
from kmqadmin.console.services.queues.share_limits import NO_MESSAGE_ACTIONS, refuse_share
from kmqadmin.kmq import InFlight, InFlightView
from kmqadmin.kmq import headers as h
from kmqadmin.kmq.draft import Draft, check_size
from kmqadmin.kmq.given_headers import BadInput

MESSAGE_ACTIONS = ("ack", "retry", "extend", "reject")
# The option an action takes, kept in its audit entry.
ACTION_OPTION = {"extend": "ms", "reject": "reason"}


_STILL_UNKNOWN = frozenset(
    {KafkaError._MSG_TIMED_OUT, KafkaError._PURGE_INFLIGHT, KafkaError._PURGE_QUEUE}
)


class Written(NamedTuple):
    id: str  # kmq-id: the message page's address
    partition: int
    offset: int


def enqueue(
    user: AbstractBaseUser,
    queue: Queue,
    message: Draft,
    reproduces: str | None = None,
    on_entry: Callable[[AuditEntry], None] = lambda entry: None,
) -> Written:
    """One message onto the queue, as a queue producer writes it (no kmq-id:
    its coordinates are its id); returns where it went once the broker has it.
    Over a cap, or to a partition the topic lacks, nothing is written
    (BadInput, TooLarge). ``reproduces``: the kmq-id it was edited from.
    ``on_entry`` gets the audit entry before the send (sent_once.py links it)."""
    config = queue.config()
    action, before = ("reproduce", {"from": reproduces}) if reproduces else ("enqueue", None)
    try:
        limit, producer = clients.record_limit(config), clients.producer(config)
    except KafkaAway as exc:  # nothing sent: the audit log says why, as for a refused send
        audit.record(user, action, queue.topic, before, error=f"not delivered: {exc}")
        raise
    check_size(message, settings.KMQ_MAX_PAYLOAD_BYTES, limit)
    if message.partition is not None and message.partition not in producer.partitions():
        raise BadInput(f"{queue.topic} has no partition {message.partition}")
    with audit.action(user, action, queue.topic, before=before) as entry:
        on_entry(entry)
        partition, offset = producer.send_confirmed(
            message.value,
            message.key,
            dict(message.headers),
            message.partition,
            later=partial(_reported_late, entry, message),
        )
        entry.after = _written(message, partition, offset)
    return Written(h.message_id(queue.topic, partition, offset), partition, offset)


def _written(message: Draft, partition: int, offset: int) -> dict[str, Any]:
    return {
        "partition": partition,
        "offset": offset,
        "key": None if message.key is None else message.key.decode(errors="replace"),
        "headers": message.header_names(),
        "bytes": len(message.value),
    }


def _reported_late(
    entry: AuditEntry, message: Draft, err: KafkaError | None, delivered: KafkaMessage
) -> None:
    """Kafka's report on a send it did not answer in time: the audit entry's
    ``unknown`` becomes what happened. A record that timed out or was purged
    (the producer closed) may have been written all the same: still unknown."""
    if err is not None and err.code() in _STILL_UNKNOWN:
        return
    if err is not None:
        entry.finish(audit.Status.FAILED, error=f"not delivered: {err.str()}")
    else:
        where = _written(message, delivered.partition(), delivered.offset())
        entry.finish(audit.Status.DONE, after=where)


def act(
    user: AbstractBaseUser,
    queue: Queue,
    message_id: str,
    action: str,
    partition: int,
    offset: int,
    **options: Any,
) -> InFlight:
    """ack / retry / extend (``ms``) / reject (``reason``) the open delivery
    at ``partition``/``offset`` (the row the person saw) of the message with
    kmq-id ``message_id``."""
    if action not in MESSAGE_ACTIONS:
        raise ValueError(f"unknown action {action!r}; one of {MESSAGE_ACTIONS}")
    refuse_share(queue, NO_MESSAGE_ACTIONS)
    config = queue.config()
    delivery = _the_copy(clients.in_flight(config), queue.topic, message_id, partition, offset)
    writer, p, o = clients.marker_writer(config), delivery.partition, delivery.offset
    before = {"partition": p, "offset": o, "deadline_ms": delivery.deadline_ms}
    field = ACTION_OPTION.get(action)
    after = {field: options[field]} if field else None
    with audit.action(user, action, message_id, before=before, after=after):
        if action == "ack":
            writer.ack(p, o)
        elif action == "retry":
            writer.retry(p, o)
        elif action == "extend":
            writer.extend(p, o, options["ms"])
        else:
            writer.reject(p, o, options.get("reason", ""))
    return delivery


def _the_copy(
    view: InFlightView, topic: str, message_id: str, partition: int, offset: int
) -> InFlight:
    """The open delivery at these coordinates, if it is the one ``message_id``
    leads to. Any producer can write a kmq-id header: a copy claiming another
    message's id must not steer an action (nor its audit entry) onto that
    message, nor may an action meant for it land on the other one."""
    parsed = h.parse_message_id(message_id)
    if parsed is None or parsed[0] != topic:
        raise Conflict(f"{message_id!r} is not a kmq-id of {topic} (<topic>/<partition>/<offset>)")
    shown = f"{topic}/{partition}/{offset}"
    if view.get(partition, offset) is None:
        raise Missing(f"message {message_id} is not in flight at {shown}")
    delivery = view.find(message_id)
    if delivery is None or (delivery.partition, delivery.offset) != (partition, offset):
        raise Conflict(
            f"the copy at {shown} is not the open delivery of {message_id} "
            "(its kmq-id header names another message); nothing done"
        )
    return delivery
