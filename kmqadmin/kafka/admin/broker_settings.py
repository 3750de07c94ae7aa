"""A broker setting as each broker of a cluster has it."""

from collections.abc import Mapping
from typing import Any

from confluent_kafka.admin import ConfigResource, ResourceType

from .topics import admin_client


def broker_setting(
    bootstrap_servers: str, kafka_config: Mapping[str, Any], name: str, timeout_s: float
) -> dict[int, str]:
    """Broker id -> the value of setting ``name`` there. KafkaException or
    TimeoutError when the cluster does not answer in time, or refuses
    (DescribeConfigs needs its permission); KeyError when a broker has no such
    setting."""
    admin = admin_client(bootstrap_servers, kafka_config)
    brokers = admin.list_topics(timeout=timeout_s).brokers
    resources = {node: ConfigResource(ResourceType.BROKER, str(node)) for node in brokers}
    described = admin.describe_configs(list(resources.values()), request_timeout=timeout_s)
    return {
        node: described[resource].result(timeout_s)[name].value
        for node, resource in resources.items()
    }
