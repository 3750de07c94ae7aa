"""How large a record a topic takes: the smaller of the topic's
max.message.bytes (the broker's check) and the producer's own
message.max.bytes (librdkafka's, 1,000,000 by default), so a request can be
refused with the real limit before a produce fails with a vague error."""

from collections.abc import Mapping
from typing import Any

from confluent_kafka.admin import ConfigResource, ResourceType

from kmqadmin.kafka.admin.topics import admin_client
from kmqadmin.kafka.client.config import producer_config

# librdkafka's default message.max.bytes, when the configuration sets none.
PRODUCER_DEFAULT = 1_000_000
# What a record adds to its key, value and headers in a batch of one
# (batch header, varint lengths, timestamps): generously rounded up.
RECORD_OVERHEAD = 512


def max_record_bytes(
    bootstrap_servers: str, topic: str, extra: Mapping[str, Any] | None = None
) -> int:
    """The most key + value + header bytes one record of ``topic`` may hold."""
    admin = admin_client(bootstrap_servers, extra)
    resource = ConfigResource(ResourceType.TOPIC, topic)
    described = admin.describe_configs([resource], request_timeout=10)[resource].result(10)
    topic_max = int(described["max.message.bytes"].value)
    return min(topic_max, producer_max_bytes(bootstrap_servers, extra))


def producer_max_bytes(bootstrap_servers: str, extra: Mapping[str, Any] | None = None) -> int:
    """The producer's own limit alone: what is known without asking the broker."""
    config = producer_config(bootstrap_servers, extra=extra)
    return int(config.get("message.max.bytes", PRODUCER_DEFAULT)) - RECORD_OVERHEAD


def record_bytes(value: bytes, key: bytes | None, headers: Mapping[str, bytes]) -> int:
    """What a record's key, value and headers weigh against that limit."""
    return (
        len(value)
        + len(key or b"")
        + sum(len(name.encode()) + len(data) for name, data in headers.items())
    )
