"""Topic administration: existence, partition counts, idempotent creation."""

import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, ClusterMetadata, NewTopic, OffsetSpec

from kmqadmin.kafka.client.config import client_config
from kmqadmin.kafka.client.errors import BrokerUnavailable, TopicMissing


def admin_client(bootstrap_servers: str, extra: Mapping[str, Any] | None = None) -> AdminClient:
    """Quiet below critical: every failure reaches the caller as an exception."""
    return AdminClient(client_config(bootstrap_servers, {"log_level": 2, **(extra or {})}))


def cluster_metadata(
    bootstrap_servers: str, timeout: float = 5.0, admin: AdminClient | None = None
) -> ClusterMetadata:
    """Metadata for all topics, or BrokerUnavailable naming the variable to fix."""
    try:
        # Not ``admin or ...``: a client with nothing queued has len() 0, so is falsy.
        client = admin if admin is not None else admin_client(bootstrap_servers)
        return client.list_topics(timeout=timeout)
    except KafkaException as exc:
        raise BrokerUnavailable(bootstrap_servers, exc.args[0].str()) from None


def topic_partitions(client: Consumer, topic: str, timeout: float = 10.0) -> list[int]:
    """The partition ids of ``topic``, sorted, asked through a client the
    caller already holds; TopicMissing (naming the fix) when it does not exist."""
    metadata = client.list_topics(topic, timeout=timeout).topics.get(topic)
    if metadata is None or metadata.error is not None or not metadata.partitions:
        raise TopicMissing(topic)
    return sorted(metadata.partitions)


def partition_counts(metadata: ClusterMetadata, topics: list[str]) -> dict[str, int | None]:
    """Partition count per topic in ``metadata``; None where the topic does not
    exist (or the broker reports an error for it)."""
    counts: dict[str, int | None] = {}
    for name in topics:
        meta = metadata.topics.get(name)
        counts[name] = len(meta.partitions) if meta is not None and meta.error is None else None
    return counts


def ensure_topics(
    bootstrap_servers: str,
    partitions: Mapping[str, int],
    configs: Mapping[str, Mapping[str, str]] | None = None,
    timeout: float = 10.0,
    extra: Mapping[str, Any] | None = None,
) -> list[str]:
    """Create the topics that are missing; returns the names created.

    An existing topic is left alone even if its partition count differs: that
    is for `kmq doctor` to report, never for a helper to change silently.
    """
    admin = admin_client(bootstrap_servers, extra)  # must outlive its futures
    counts = partition_counts(cluster_metadata(bootstrap_servers, timeout, admin), list(partitions))
    wanted = [
        NewTopic(name, num_partitions=n, config=dict((configs or {}).get(name, {})))
        for name, n in partitions.items()
        if counts[name] is None
    ]
    if not wanted:
        return []
    futures = admin.create_topics(wanted, request_timeout=timeout)
    for future in futures.values():
        try:
            future.result(timeout)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise
    created = [topic.topic for topic in wanted]
    _wait_led(admin, created, timeout)
    return created


def delete_topics(
    bootstrap_servers: str,
    topics: list[str],
    timeout: float = 10.0,
    extra: Mapping[str, Any] | None = None,
) -> list[str]:
    """Delete the topics that exist; returns the names deleted. Kafka
    deletes in the background: the names may stay taken for a while."""
    admin = admin_client(bootstrap_servers, extra)  # must outlive its futures
    counts = partition_counts(cluster_metadata(bootstrap_servers, timeout, admin), topics)
    doomed = [name for name in topics if counts[name] is not None]
    if not doomed:
        return []
    for future in admin.delete_topics(doomed, request_timeout=timeout).values():
        try:
            future.result(timeout)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.UNKNOWN_TOPIC_OR_PART:
                raise
    return doomed


def _wait_led(admin: AdminClient, topics: list[str], timeout: float) -> None:
    """Kafka answers CreateTopics before every partition's leader serves it: a
    client used at once can get LEADER_NOT_AVAILABLE or NOT_LEADER_FOR_PARTITION.
    Returns once every new partition answers an offsets query."""
    deadline = time.monotonic() + timeout
    while not _all_served(admin, topics):
        if time.monotonic() >= deadline:
            raise KafkaException(f"topics {topics} not served {timeout} s after creation")
        time.sleep(0.05)


def _all_served(admin: AdminClient, topics: list[str]) -> bool:
    metadata = cluster_metadata("", 5.0, admin).topics
    wanted = {}
    for name in topics:
        meta = metadata.get(name)
        if meta is None or meta.error is not None or not meta.partitions:
            return False
        wanted.update({TopicPartition(name, p): OffsetSpec.latest() for p in meta.partitions})
    try:
        for future in admin.list_offsets(wanted, request_timeout=5).values():
            future.result()
    except KafkaException:
        return False
    return True
