"""A share queue's group configs, checked against what the broker allows.

The broker, not a client, decides where a share group starts reading, whether
it sees aborted records and how long a record stays acquired; its defaults
(start at the latest offset, read_uncommitted, 30 s locks) would lose every
message produced before the first consumer joined, and show the aborted ones.
So the group is configured before its first consumer polls, and what the
broker cannot do is refused here, by name, rather than left to surprise.
"""

from dataclasses import dataclass

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)

from kmqadmin.kafka.errors import KafkaSetupError
from kmqadmin.kafka.topics import admin_client

from .config import QueueConfig

TIMEOUT_S = 10.0


class ShareGroupError(KafkaSetupError):
    """The broker cannot serve this queue as a share queue; says what to change."""


@dataclass(frozen=True, slots=True)
class BrokerLimits:
    """The broker's bounds on share groups (its group.share.* configs)."""

    delivery_count_limit: int
    min_lock_ms: int
    max_lock_ms: int


def group_configs(config: QueueConfig) -> dict[str, str]:
    """What the group must be set to: every record from the start of the
    topic, committed ones only, locked for the queue's message timeout."""
    return {
        "share.auto.offset.reset": "earliest",
        "share.isolation.level": "read_committed",
        "share.record.lock.duration.ms": str(config.message_timeout_ms),
    }


def check(config: QueueConfig, limits: BrokerLimits) -> None:
    """ShareGroupError when the broker's bounds cannot hold this queue.

    Our limit must stay below the broker's: a record over max_redeliveries
    is moved to the DLQ on the delivery after its last allowed one, and the
    broker must still be willing to deliver it that once (after its own
    limit it archives the record, out of our DLQ's reach).
    """
    needed = config.max_redeliveries + 2
    if needed > limits.delivery_count_limit:
        raise ShareGroupError(
            f"{config.topic}: max_redeliveries {config.max_redeliveries} needs the broker's "
            f"group.share.delivery.count.limit at least {needed}, it is "
            f"{limits.delivery_count_limit}; lower max_redeliveries to "
            f"{limits.delivery_count_limit - 2} or raise the broker setting"
        )
    if not limits.min_lock_ms <= config.message_timeout_ms <= limits.max_lock_ms:
        raise ShareGroupError(
            f"{config.topic}: message_timeout_ms {config.message_timeout_ms} becomes the share "
            f"group's lock duration, which this broker bounds to {limits.min_lock_ms}.."
            f"{limits.max_lock_ms} ms (group.share.min/max.record.lock.duration.ms); pick a "
            "timeout in that range or change the broker's bounds"
        )


def configure(config: QueueConfig) -> None:
    """Checks the queue against the broker's bounds, then sets the group's
    configs (idempotent: run before every client starts)."""
    admin = admin_client(config.bootstrap_servers, config.kafka_config)
    check(config, broker_limits(admin))
    entries = [
        ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
        for name, value in group_configs(config).items()
    ]
    resource = ConfigResource(ResourceType.GROUP, config.group_id, incremental_configs=entries)
    try:
        admin.incremental_alter_configs([resource], request_timeout=TIMEOUT_S)[resource].result(
            TIMEOUT_S
        )
    except KafkaException as exc:
        raise ShareGroupError(
            f"cannot configure share group {config.group_id}: {exc.args[0].str()}"
        ) from None


def broker_limits(admin: AdminClient) -> BrokerLimits:
    """The bounds of one broker (a cluster's brokers share them in practice);
    ShareGroupError when it has no share groups (Kafka before 4.2)."""
    try:
        node = next(iter(admin.list_topics(timeout=TIMEOUT_S).brokers))
        resource = ConfigResource(ResourceType.BROKER, str(node))
        found = admin.describe_configs([resource], request_timeout=TIMEOUT_S)[resource]
        entries = found.result(TIMEOUT_S)
    except KafkaException as exc:
        raise ShareGroupError(f"cannot read the broker's share-group limits: {exc}") from None
    try:
        return BrokerLimits(
            int(entries["group.share.delivery.count.limit"].value),
            int(entries["group.share.min.record.lock.duration.ms"].value),
            int(entries["group.share.max.record.lock.duration.ms"].value),
        )
    except KeyError as exc:
        raise ShareGroupError(
            f"the broker has no {exc.args[0]}: share groups need Apache Kafka 4.2 or later"
        ) from None
