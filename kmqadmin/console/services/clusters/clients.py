"""The Kafka clients this web process keeps: one of each kind per queue or
schedules topic.

Created on first use and kept, keyed by the queue's whole configuration: a
request then pays for no connection set-up, and an InFlightView reads only
the markers written since the last request. Saving or deleting a queue or a
schedules topic closes its clients (signals.py), so an edited queue gets new
ones and a deleted one leaves no connection behind.
"""

import threading
from collections.abc import Callable

from confluent_kafka import KafkaException

from kmqadmin.console.models import Cluster
from kmqadmin.console.services.clusters import availability
from kmqadmin.kafka.admin.consumer_groups import ConsumerGroupAdmin
from kmqadmin.kafka.admin.groups import Kind
from kmqadmin.kafka.admin.message_size import max_record_bytes, producer_max_bytes
from kmqadmin.kafka.admin.share_groups import ShareGroupAdmin
from kmqadmin.kafka.client.security.masking import Masked
from kmqadmin.kafka.inspect.browse import TopicBrowser
from kmqadmin.kmq import (
    DeadLetters,
    InFlightView,
    LifecycleFinder,
    MarkerWriter,
    QueueConfig,
    QueueGauges,
    QueueProducer,
)
from kmqadmin.kmq.share.counts_reader import ShareCountsReader
from kmqadmin.scheduler import ScheduleClient, SchedulerConfig, UpcomingView

_clients: dict[tuple[str, str, str], object] = {}
_lock = threading.Lock()


def _kept[C: QueueConfig | SchedulerConfig, T](kind: Callable[[C], T], config: C) -> T:
    """The kept client; KafkaAway first if the cluster does not answer."""
    availability.require(config.bootstrap_servers, config.kafka_config)
    key = (config.topic, kind.__name__, repr(config))
    with _lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = kind(config)
    return client  # type: ignore[return-value]


def close(topic: str | None = None) -> None:
    """Closes the clients kept for ``topic`` (every client when None)."""
    with _lock:
        keys = [k for k in _clients if topic is None or k[0] == topic]
        closing = [_clients.pop(k) for k in keys]
    for client in closing:
        if (close_client := getattr(client, "close", None)) is not None:
            close_client()


def in_flight(config: QueueConfig) -> InFlightView:
    """The queue's in-flight view, caught up with the markers topic."""
    view = _kept(InFlightView, config)
    view.refresh()
    return view


def producer(config: QueueConfig) -> QueueProducer:
    """For the messages people write one at a time: each says where it went."""
    return _kept(_confirming_producer, config)


def _confirming_producer(config: QueueConfig) -> QueueProducer:
    return QueueProducer(config, confirm_each=True)


def marker_writer(config: QueueConfig) -> MarkerWriter:
    return _kept(MarkerWriter, config)


def gauges(config: QueueConfig) -> QueueGauges:
    return _kept(QueueGauges, config)


def dead_letters(config: QueueConfig) -> DeadLetters:
    return _kept(DeadLetters, config)


def upcoming(config: SchedulerConfig) -> UpcomingView:
    """The topic's live schedules, caught up (or as far as one refresh reads)."""
    view = _kept(UpcomingView, config)
    view.refresh()
    return view


def schedule_client(config: SchedulerConfig) -> ScheduleClient:
    return _kept(ScheduleClient, config)


def lifecycle(config: QueueConfig) -> LifecycleFinder:
    return _kept(LifecycleFinder, config)


def record_limit(config: QueueConfig) -> int:
    """The most key + value + header bytes a record of the queue may hold,
    asked of the broker once and kept with the clients (an edit of the queue
    forgets it with them). KafkaAway when the cluster is known to be away;
    a broker that answers metadata but not this leaves the producer's own
    limit, not kept: the produce that follows fails (and is audited)."""
    availability.require(config.bootstrap_servers, config.kafka_config)
    key = (config.topic, "record_limit", repr(config))
    with _lock:
        known = _clients.get(key)
    if known is None:
        try:
            known = max_record_bytes(config.bootstrap_servers, config.topic, config.kafka_config)
        except (KafkaException, TimeoutError):
            return producer_max_bytes(config.bootstrap_servers, config.kafka_config)
        with _lock:
            _clients[key] = known
    return known  # type: ignore[return-value]


def share_group_admin(config: QueueConfig) -> ShareGroupAdmin:
    """The share-group admin of the queue's cluster (kafka-python's I/O
    thread and a confluent AdminClient), kept like the other clients."""
    return _kept(_share_group_admin, config)


def _share_group_admin(config: QueueConfig) -> ShareGroupAdmin:
    return ShareGroupAdmin(config.bootstrap_servers, config.kafka_config)


def share_counts(config: QueueConfig) -> ShareCountsReader:
    return _kept(_share_counts, config)


def _share_counts(config: QueueConfig) -> ShareCountsReader:
    return ShareCountsReader(config.bootstrap_servers, config.counts_topic, config.kafka_config)


def topic_browser(cluster: str, bootstrap_servers: str, kafka_config: Masked) -> TopicBrowser:
    """The browsing consumer of a cluster, kept under ``cluster_key(cluster)``
    so an edit of the cluster closes it (signals.py)."""
    availability.require(bootstrap_servers, kafka_config)
    key = (cluster_key(cluster), "TopicBrowser", repr((bootstrap_servers, kafka_config)))
    with _lock:
        browser = _clients.get(key)
        if browser is None:
            browser = _clients[key] = TopicBrowser(bootstrap_servers, kafka_config)
    return browser  # type: ignore[return-value]


def cluster_key(cluster: str) -> str:
    """What ``close`` takes to close a cluster's own clients: no topic is
    named like it (a topic name has no colon)."""
    return f"cluster:{cluster}"


def group_admin(cluster: Cluster, kind: Kind) -> ConsumerGroupAdmin | ShareGroupAdmin:
    """The cluster's admin for one kind of group, kept until the cluster is
    saved or deleted (signals.py closes it under ``cluster_key``)."""
    bootstrap, config = cluster.bootstrap, cluster.kafka_config()
    availability.require(bootstrap, config)
    key = (cluster_key(cluster.name), kind, repr((bootstrap, config)))
    with _lock:
        admin = _clients.get(key)
        if admin is None:
            made = ConsumerGroupAdmin if kind == "consumer" else ShareGroupAdmin
            admin = _clients[key] = made(bootstrap, config)
    return admin  # type: ignore[return-value]
