"""Whether a queue may change backend now: never while a message is in flight.

A kmq queue's open deliveries live in its markers, which a share group never
reads; a share queue's acquired records live in the broker's share group,
which no tracker reads. Switching under either would lose them (or deliver
them twice), so the registry, the API and /admin/ refuse it, saying why and
how many, until the queue is drained.
"""

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient
from django.contrib.auth.base_user import AbstractBaseUser

from kmqadmin.console.models import Queue
from kmqadmin.console.services.audit import trail as audit
from kmqadmin.console.services.clusters import clients
from kmqadmin.kafka.admin.offset_reader import ReadTimeout
from kmqadmin.kafka.admin.share_groups import PartitionProgress
from kmqadmin.kafka.admin.topics import admin_client
from kmqadmin.kafka.client.errors import KafkaSetupError, TopicMissing

# How long the check may read the markers topic to its end before giving up.
CATCH_UP_S = 5.0
# Each admin call of the position's move.
TIMEOUT_S = 10.0


class SwitchRefused(Exception):
    """The queue has messages in flight under its present backend."""


def check_switch(user: AbstractBaseUser | None, queue: Queue, backend: str) -> None:
    """Raises SwitchRefused (audited, with the reason) when ``queue``, as
    saved, may not move to ``backend`` now; else moves its group's position
    to the new backend's group (carry_position). A switch allowed is
    audited with the registration that saves it."""
    if backend == queue.backend:
        return
    reason = kmq_in_flight(queue) if queue.backend == "kmq" else share_group_busy(queue)
    reason = reason or carry_position(queue, backend)
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
    """Why not, while share group ``queue.group_id`` has members: they hold
    acquired records the kmq backend would know nothing of."""
    config = queue.config()
    try:
        group = clients.share_group_admin(config).describe(config.group_id)
    except (KafkaSetupError, KafkaException, TimeoutError) as exc:
        return f"could not describe share group {config.group_id}: {exc}"
    if group.members:
        return (
            f"share group {config.group_id} has {len(group.members)} consumer(s) connected, "
            "which hold the records they acquired: stop the workers and switch then"
        )
    return None


def carry_position(queue: Queue, backend: str) -> str | None:
    """Moves where the queue's group stands to the other backend's group, so
    the switch neither redelivers what was done nor skips what was not.

    One group id cannot be a consumer group and a share group at once (the
    broker refuses the second kind), so the old group is read, deleted, and
    the new one created at its position. Where the share group's persisted
    start offset trails what it acknowledged (it does by one write), the
    records in between are delivered again: at-least-once, never lost.
    Returns why not, or None once done.
    """
    config = queue.config()
    admin = admin_client(config.bootstrap_servers, config.kafka_config)
    try:
        if backend == "share":
            offsets = _committed(admin, config.group_id, config.topic)
            _delete_group(admin, config.group_id)
            if offsets:
                starts = {(config.topic, p): o for p, o in offsets.items()}
                clients.share_group_admin(config).move(config.group_id, starts)
        else:
            progress = clients.share_group_admin(config).progress(config.group_id, config.topic)
            offsets = {p.partition: _position(p) for p in progress if p.start_offset is not None}
            _delete_group(admin, config.group_id)
            if offsets:
                _commit(admin, config.group_id, config.topic, offsets)
    except (KafkaSetupError, KafkaException, TimeoutError) as exc:
        return f"could not move group {config.group_id} to the {backend} backend: {exc}"
    return None


def _position(progress: PartitionProgress) -> int:
    """Where the kmq group starts: past everything when the broker says
    nothing is left, else the share group's start offset."""
    if progress.lag_exact and progress.lag == 0:
        return progress.end
    assert progress.start_offset is not None
    return progress.start_offset


def _committed(admin: AdminClient, group_id: str, topic: str) -> dict[int, int]:
    asked = [ConsumerGroupTopicPartitions(group_id)]
    found = admin.list_consumer_group_offsets(asked)[group_id].result(TIMEOUT_S)
    return {
        tp.partition: tp.offset
        for tp in found.topic_partitions
        if tp.topic == topic and tp.offset >= 0 and tp.error is None
    }


def _delete_group(admin: AdminClient, group_id: str) -> None:
    """Deletes the group, of either kind; one that does not exist is fine."""
    try:
        admin.delete_consumer_groups([group_id], request_timeout=TIMEOUT_S)[group_id].result(
            TIMEOUT_S
        )
    except KafkaException as exc:
        if exc.args[0].code() != KafkaError.GROUP_ID_NOT_FOUND:
            raise


def _commit(admin: AdminClient, group_id: str, topic: str, offsets: dict[int, int]) -> None:
    partitions = [TopicPartition(topic, p, o) for p, o in offsets.items()]
    asked = [ConsumerGroupTopicPartitions(group_id, partitions)]
    admin.alter_consumer_group_offsets(asked)[group_id].result(TIMEOUT_S)
