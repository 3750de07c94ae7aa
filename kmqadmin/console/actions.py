"""What a person or a service can do to a queue or a schedule, audited.

The console's forms and the REST API both act through these functions, so an
action means the same thing (the same marker or record, the same audit
entry) whichever way it was asked for. Each writes to Kafka and waits for
the broker before it records the audit entry.
"""

import time
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser

from kmqadmin.kmq import InFlight
from kmqadmin.kmq import headers as h
from kmqadmin.scheduler import Upcoming

from . import audit, clients
from .models import Queue, ScheduleTopic

MESSAGE_ACTIONS = ("ack", "retry", "extend", "reject")
# The option an action takes, kept in its audit entry.
ACTION_OPTION = {"extend": "ms", "reject": "reason"}


class Missing(LookupError):
    """What the action is on is not there (no longer in flight, compacted...)."""


def act(
    user: AbstractBaseUser, queue: Queue, message_id: str, action: str, **options: Any
) -> InFlight:
    """ack / retry / extend (``ms``) / reject (``reason``) the open delivery
    of the message with kmq-id ``message_id``."""
    config = queue.config()
    delivery = clients.in_flight(config).find(message_id)
    if delivery is None:
        raise Missing(f"message {message_id} is not in flight on {queue.topic}")
    writer, p, o = clients.marker_writer(config), delivery.partition, delivery.offset
    if action == "ack":
        writer.ack(p, o)
    elif action == "retry":
        writer.retry(p, o)
    elif action == "extend":
        writer.extend(p, o, options["ms"])
    elif action == "reject":
        writer.reject(p, o, options.get("reason", ""))
    else:
        raise ValueError(f"unknown action {action!r}; one of {MESSAGE_ACTIONS}")
    before = {"partition": p, "offset": o, "deadline_ms": delivery.deadline_ms}
    field = ACTION_OPTION.get(action)
    after = {field: options[field]} if field else None
    audit.record(user, action, message_id, before=before, after=after)
    return delivery


def redrive(user: AbstractBaseUser, queue: Queue, partition: int, offset: int):
    """One letter back to the queue, delivery count reset; returns the letter."""
    letters = clients.dead_letters(queue.config())
    known = partition in letters.partitions()
    letter = letters.get(partition, offset) if known else None
    if letter is None:
        raise Missing(f"no letter at {partition}/{offset} of {queue.topic}'s DLQ")
    letters.redrive([letter])
    stable = h.find(letter.headers(), h.MESSAGE_ID)
    where = f"{queue.topic}/dlq/{partition}/{offset}"
    target = stable.decode(errors="replace") if stable else where
    audit.record(
        user,
        "redrive",
        target,
        before={"partition": partition, "offset": offset},
        after={"topic": queue.topic},
    )
    return letter


def live_schedule(topic: ScheduleTopic, schedule_id: str) -> Upcoming:
    found = clients.upcoming(topic.config()).get(schedule_id)
    if found is None:
        raise Missing(f"no live schedule {schedule_id} on {topic.topic}")
    return found


def write_schedule(
    user: AbstractBaseUser, topic: ScheduleTopic, schedule_id: str, data: dict, *, edit: bool
) -> None:
    """A version of ``schedule_id``: ``data`` holds at, target_topic, payload,
    key and headers. ``edit`` requires the schedule to be live (and audits
    what it was)."""
    before = shown_schedule(live_schedule(topic, schedule_id)) if edit else None
    key = data.get("key")
    client = clients.schedule_client(topic.config())
    client.schedule(
        schedule_id,
        data["at"],
        data["target_topic"],
        data["payload"],
        target_key=None if key is None else key.encode(),
        headers=data.get("headers") or {},
    )
    client.flush(10)
    after = {"at": data["at"].isoformat(), "target_topic": data["target_topic"]}
    action = "edit schedule" if edit else "schedule"
    audit.record(user, action, f"{topic.topic}/{schedule_id}", before, after)


def cancel_schedule(user: AbstractBaseUser, topic: ScheduleTopic, schedule_id: str) -> None:
    """A tombstone, so it never fires."""
    before = shown_schedule(live_schedule(topic, schedule_id))
    client = clients.schedule_client(topic.config())
    client.cancel(schedule_id)
    client.flush(10)
    audit.record(user, "cancel schedule", f"{topic.topic}/{schedule_id}", before=before)


def fire_schedule(user: AbstractBaseUser, topic: ScheduleTopic, schedule_id: str) -> None:
    """A new version due now, with the payload, key and headers it had."""
    live = live_schedule(topic, schedule_id)
    config = topic.config()
    record = clients.upcoming(config).record(live)
    if record is None:
        raise Missing(f"schedule {schedule_id}'s record is gone (compacted)")
    client = clients.schedule_client(config)
    client.reschedule(record, at=time.time())
    client.flush(10)
    audit.record(user, "fire schedule now", f"{topic.topic}/{schedule_id}", shown_schedule(live))


def shown_schedule(upcoming: Upcoming) -> dict:
    """A schedule as the API returns it and the audit log keeps it."""
    return {
        "id": upcoming.id,
        "due_ms": upcoming.due_ms,
        "target_topic": upcoming.target_topic,
        "partition": upcoming.partition,
        "offset": upcoming.offset,
    }


# The name kmqadmin/api/schedules.py still calls; remove once it calls shown_schedule.
shown = shown_schedule
