"""A share queue's group configs, checked against what the broker allows.

The broker, not a client, decides where a share group starts reading, whether
it sees aborted records and how long a record stays acquired; its defaults
(start at the latest offset, read_uncommitted, 30 s locks) would lose every
message produced before the first consumer joined, and show the aborted ones.
So the group is configured before its first consumer polls, and what the
broker cannot do is refused here, by name, rather than left to surprise.
"""

import time
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)

from kmqadmin.kafka.admin.share_groups import BrokerLimits, ShareGroupError, broker_limits
from kmqadmin.kafka.admin.topics import admin_client

TIMEOUT_S = 10.0


class ShareQueue(Protocol):
    """What configuring a group needs of a queue. QueueConfig is one; it is
    named by shape, not imported, because QueueConfig.ensure_topics calls
    configure() and the arrow runs one way."""

    topic: str
    group_id: str
    bootstrap_servers: str
    kafka_config: Mapping[str, Any]
    message_timeout_ms: int
    max_redeliveries: int


def group_configs(config: ShareQueue) -> dict[str, str]:
    """What the group must be set to: every record from the start of the
    topic, committed ones only, locked for the queue's message timeout."""
    return {
        "share.auto.offset.reset": "earliest",
        "share.isolation.level": "read_committed",
        "share.record.lock.duration.ms": str(config.message_timeout_ms),
    }


def check(config: ShareQueue, limits: BrokerLimits) -> None:
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


def configure(config: ShareQueue) -> None:
    """Checks the queue against the broker's bounds, then sets the group's
    configs (idempotent: run before every client starts)."""
    admin = admin_client(config.bootstrap_servers, config.kafka_config)
    check(config, broker_limits(admin, TIMEOUT_S))
    try:
        set_group_configs(admin, config.group_id, group_configs(config))
    except KafkaException as exc:
        raise ShareGroupError(
            f"cannot configure share group {config.group_id}: {exc.args[0].str()}"
        ) from None


def set_group_configs(admin: AdminClient, group_id: str, configs: dict[str, str]) -> None:
    """Sets ``configs`` on the group and returns once the broker answers with
    them. The controller has taken a change when the alter returns, a broker's
    copy of the metadata a moment later: a member joining in between starts
    reading where the old configs said (the latest record, by default)."""
    entries = [
        ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
        for name, value in configs.items()
    ]
    resource = ConfigResource(ResourceType.GROUP, group_id, incremental_configs=entries)
    admin.incremental_alter_configs([resource], request_timeout=TIMEOUT_S)[resource].result(
        TIMEOUT_S
    )
    deadline = time.monotonic() + TIMEOUT_S
    while (seen := _group_configs(admin, group_id, configs)) != configs:
        if time.monotonic() > deadline:
            raise ShareGroupError(
                f"share group {group_id}: the broker still answers {seen} "
                f"{TIMEOUT_S:.0f} s after it took {configs}"
            )
        time.sleep(0.05)


def _group_configs(admin: AdminClient, group_id: str, names: Iterable[str]) -> dict[str, str]:
    resource = ConfigResource(ResourceType.GROUP, group_id)
    found = admin.describe_configs([resource], request_timeout=TIMEOUT_S)[resource].result(
        TIMEOUT_S
    )
    return {name: found[name].value for name in names}
