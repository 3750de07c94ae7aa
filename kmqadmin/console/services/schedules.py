"""What a person or a service can do to a schedules topic's schedules, audited.

Each action records its intent in the audit log, writes a schedule version
or a tombstone, waits for the broker and records the outcome.
"""

import time

from django.contrib.auth.base_user import AbstractBaseUser

from kmqadmin.scheduler import Upcoming

from ..models import ScheduleTopic
from . import audit, clients
from .missing import Missing


class TargetNotAllowed(ValueError):
    """The schedules topic's allowlist does not hold the target: the scheduler
    would skip the schedule, so it is refused before it is written."""


def allowed_target(topic: ScheduleTopic, target_topic: str) -> None:
    if not topic.config().allows(target_topic):
        allowed = ", ".join(sorted(topic.allowed_targets))
        raise TargetNotAllowed(
            f"{topic.topic}'s schedules may not fire into {target_topic}; allowed: {allowed}"
        )


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
    allowed_target(topic, data["target_topic"])
    before = schedule_fields(live_schedule(topic, schedule_id)) if edit else None
    key = data.get("key")
    client = clients.schedule_client(topic.config())
    after = {"at": data["at"].isoformat(), "target_topic": data["target_topic"]}
    action = "edit schedule" if edit else "schedule"
    with audit.action(user, action, f"{topic.topic}/{schedule_id}", before, after):
        client.schedule(
            schedule_id,
            data["at"],
            data["target_topic"],
            data["payload"],
            target_key=None if key is None else key.encode(),
            headers=data.get("headers") or {},
        )
        client.flush(10)


def cancel_schedule(user: AbstractBaseUser, topic: ScheduleTopic, schedule_id: str) -> None:
    """A tombstone, so it never fires."""
    before = schedule_fields(live_schedule(topic, schedule_id))
    client = clients.schedule_client(topic.config())
    with audit.action(user, "cancel schedule", f"{topic.topic}/{schedule_id}", before=before):
        client.cancel(schedule_id)
        client.flush(10)


def fire_schedule(user: AbstractBaseUser, topic: ScheduleTopic, schedule_id: str) -> None:
    """A new version due now, with the payload, key and headers it had."""
    live = live_schedule(topic, schedule_id)
    allowed_target(topic, live.target_topic)
    config = topic.config()
    record = clients.upcoming(config).record(live)
    if record is None:
        raise Missing(f"schedule {schedule_id}'s record is gone (compacted)")
    client = clients.schedule_client(config)
    target = f"{topic.topic}/{schedule_id}"
    with audit.action(user, "fire schedule now", target, schedule_fields(live)):
        client.reschedule(record, at=time.time())
        client.flush(10)


def schedule_fields(upcoming: Upcoming) -> dict:
    """A schedule as the audit log keeps it (the API's UpcomingSerializer has
    the same fields)."""
    return {
        "id": upcoming.id,
        "due_ms": upcoming.due_ms,
        "target_topic": upcoming.target_topic,
        "partition": upcoming.partition,
        "offset": upcoming.offset,
    }
