"""A broker setting as each broker of a cluster has it."""

from collections.abc import Mapping
from typing import Any

from confluent_kafka.admin import ConfigResource, ResourceType

from kmqadmin.kafka.admin.topics import admin_client


def broker_setting(
    bootstrap_servers: str, kafka_config: Mapping[str, Any], name: str, timeout_s: float
) -> dict[int, str]:
    """Broker id -> the value of setting ``name`` there. KafkaException or
    TimeoutError when the cluster does not answer in time, or refuses
    (DescribeConfigs needs its permission); KeyError when a broker has no such
    setting."""
    admin = admin_client(bootstrap_servers, kafka_config)
    brokers = admin.list_topics(timeout=timeout_s).brokers
    # One call per broker, all in flight together: librdkafka refuses a
    # DescribeConfigs naming two brokers ("Only one ConfigResource of type
    # BROKER is allowed per call"), as each broker answers only for itself.
    asked = {}
    for node in brokers:
        resource = ConfigResource(ResourceType.BROKER, str(node))
        asked[node] = admin.describe_configs([resource], request_timeout=timeout_s)[resource]
    return {node: future.result(timeout_s)[name].value for node, future in asked.items()}
