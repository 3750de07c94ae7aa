"""What a person or a service can do to a schedules topic's schedules, audited.

Each action records its intent in the audit log, writes a schedule version
or a tombstone, waits for the broker and records the outcome.
"""

import time

from django.contrib.auth.base_user import AbstractBaseUser

from kmqadmin.console.models import ScheduleTopic
from kmqadmin.console.services.audit import trail as audit
from kmqadmin.console.services.clusters import clients
from kmqadmin.console.services.missing import Missing
from kmqadmin.scheduler import Upcoming
from kmqadmin.scheduler.schedule_refs import key_of, ref_of


class TargetNotAllowed(ValueError):
    """The schedules topic's allowlist does not hold the target: the scheduler
    would skip the schedule, so it is refused before it is written."""


def allowed_target(topic: ScheduleTopic, target_topic: str) -> None:
    if not topic.config().allows(target_topic):
        allowed = ", ".join(sorted(topic.allowed_targets))
        raise TargetNotAllowed(
            f"{topic.topic}'s schedules may not fire into {target_topic}; allowed: {allowed}"
        )


def live_schedule(topic: ScheduleTopic, ref: str) -> Upcoming:
    """The live schedule ``ref`` (schedule_refs: its key, reversibly) addresses."""
    try:
        key = key_of(ref)
    except ValueError as exc:
        raise Missing(f"no schedule is addressed {ref!r} ({exc})") from None
    found = clients.upcoming(topic.config()).get(key)
    if found is None:
        raise Missing(f"no live schedule {ref} on {topic.topic}")
    return found


def write_schedule(
    user: AbstractBaseUser, topic: ScheduleTopic, schedule_key: bytes, data: dict, *, edit: bool
) -> None:
    """A version of the schedule ``schedule_key``: ``data`` holds at,
    target_topic, payload, key (the fired record's) and headers. ``edit``
    requires the schedule to be live (and audits what it was)."""
    ref = ref_of(schedule_key)
    before = schedule_fields(live_schedule(topic, ref)) if edit else None
    allowed_target(topic, data["target_topic"])
    key = data.get("key")
    client = clients.schedule_client(topic.config())
    after = {"at": data["at"].isoformat(), "target_topic": data["target_topic"]}
    action = "edit schedule" if edit else "schedule"
    with audit.action(user, action, f"{topic.topic}/{ref}", before, after):
        client.schedule(
            schedule_key,
            data["at"],
            data["target_topic"],
            data["payload"],
            target_key=None if key is None else key.encode(),
            headers=data.get("headers") or {},
        )
        client.flush(10)


def cancel_schedule(user: AbstractBaseUser, topic: ScheduleTopic, ref: str) -> None:
    """A tombstone, so it never fires."""
    live = live_schedule(topic, ref)
    client = clients.schedule_client(topic.config())
    target = f"{topic.topic}/{ref}"
    with audit.action(user, "cancel schedule", target, before=schedule_fields(live)):
        client.cancel(live.key)
        client.flush(10)


def fire_schedule(user: AbstractBaseUser, topic: ScheduleTopic, ref: str) -> None:
    """A new version due now, with the payload, key and headers it had."""
    live = live_schedule(topic, ref)
    allowed_target(topic, live.target_topic)
    config = topic.config()
    record = clients.upcoming(config).record(live)
    if record is None:
        raise Missing(f"schedule {ref}'s record is gone (compacted)")
    client = clients.schedule_client(config)
    target = f"{topic.topic}/{ref}"
    with audit.action(user, "fire schedule now", target, schedule_fields(live)):
        client.reschedule(record, at=time.time())
        client.flush(10)


def schedule_fields(upcoming: Upcoming) -> dict:
    """A schedule as the audit log keeps it (the API's UpcomingSerializer has
    the same fields)."""
    return {
        "id": upcoming.id,
        "ref": upcoming.ref,
        "due_ms": upcoming.due_ms,
        "target_topic": upcoming.target_topic,
        "partition": upcoming.partition,
        "offset": upcoming.offset,
    }
