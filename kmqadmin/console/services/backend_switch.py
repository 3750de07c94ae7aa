"""Whether a queue may change backend now: never while a message is in flight.

A kmq queue's open deliveries live in its markers, which a share group never
reads; a share queue's acquired records live in the broker's share group,
which no tracker reads. Switching under either would lose them (or deliver
them twice), so the registry, the API and /admin/ refuse it, saying why and
how many, until the queue is drained.
"""

from confluent_kafka import KafkaException
from django.contrib.auth.base_user import AbstractBaseUser

from kmqadmin.kafka.errors import TopicMissing
from kmqadmin.kafka.offset_reader import ReadTimeout

from ..models import Queue
from . import audit, clients

# How long the check may read the markers topic to its end before giving up.
CATCH_UP_S = 5.0


class SwitchRefused(Exception):
    """The queue has messages in flight under its present backend."""


def check_switch(user: AbstractBaseUser | None, queue: Queue, backend: str) -> None:
    """Raises SwitchRefused (audited, with the reason) when ``queue``, as
    saved, may not move to ``backend`` now; a switch allowed is audited
    with the registration that saves it."""
    if backend == queue.backend:
        return
    reason = kmq_in_flight(queue) if queue.backend == "kmq" else share_group_busy(queue)
    if reason is not None:
        change = {"backend": queue.backend}, {"backend": backend}
        audit.record(user, "switch backend", queue.topic, *change, error=reason)
        raise SwitchRefused(reason)


def kmq_in_flight(queue: Queue) -> str | None:
    """Why not, while the in-flight view (read to the markers' end) holds an
    open delivery, or could not be read to the end in time."""
    try:
        view = clients.in_flight(queue.config())
        caught_up = view.catch_up(CATCH_UP_S)
    except (KafkaException, ReadTimeout, TopicMissing) as exc:
        return f"could not read {queue.markers_topic} to rule out messages in flight: {exc}"
    count = view.count()
    if count:
        return (
            f"{queue.topic} has {count} message(s) in flight on the kmq backend: "
            "ack, reject or let them finish (stop the workers first) and switch then"
        )
    if not caught_up:
        return (
            f"could not read {queue.markers_topic} to its end within {CATCH_UP_S:g} s, "
            "so messages in flight cannot be ruled out; try again"
        )
    return None


def share_group_busy(queue: Queue) -> str | None:
    """Why not, while share group ``queue.group_id`` may still hold records.

    HOOK, wired at merge to the share-group admin (kmqadmin/kafka/share_groups.py):
    busy = the group has members, or records not yet acknowledged (lag above
    zero). confluent-kafka 2.16 cannot tell: list_consumer_groups lists no
    share group and describe_consumer_groups answers a live one as a dead
    classic group (tried on the embedded Kafka 4.2). Until then it refuses,
    as letting the switch through would risk records acquired right now."""
    return (
        f"cannot tell whether share group {queue.group_id} still holds records: "
        "this build cannot describe share groups yet, so switching a share queue "
        "back to kmq is refused"
    )
