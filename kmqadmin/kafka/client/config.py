"""The one builder of librdkafka configurations.

Group timeouts live here: a 6 s session timeout (librdkafka's default is
45 s) means a killed worker, tracker or scheduler is noticed, and its
partitions handed to another, within 6 s. 6000 ms is the lowest the broker
accepts by default (Kafka's group.min.session.timeout.ms), so these work on
any cluster left at its defaults.
"""

from collections.abc import Mapping
from typing import Any

from kmqadmin.kafka.client.client_log import LOGGER
from kmqadmin.kafka.client.clock import to_s

KafkaConfig = dict[str, Any]

GROUP_TIMEOUTS: KafkaConfig = {
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 1000,
    "max.poll.interval.ms": 300_000,
}


def session_timeout_s(extra: Mapping[str, Any] | None = None) -> float:
    """How long the group takes to notice a member gone, as configured."""
    ms = (extra or {}).get("session.timeout.ms", GROUP_TIMEOUTS["session.timeout.ms"])
    return to_s(int(ms))


def client_config(bootstrap_servers: str, extra: Mapping[str, Any] | None = None) -> KafkaConfig:
    """Settings every client shares; ``extra`` (e.g. SASL) wins over defaults."""
    config: KafkaConfig = {
        "bootstrap.servers": bootstrap_servers,
        "client.id": "kmqadmin",
        "socket.keepalive.enable": True,
        # Not stderr: a broker's failures once a minute (client_log.py).
        "logger": LOGGER,
    }
    config.update(extra or {})
    return config


def consumer_config(
    bootstrap_servers: str, group_id: str, extra: Mapping[str, Any] | None = None
) -> KafkaConfig:
    """A group consumer that commits explicitly and never reads aborted records."""
    config = client_config(bootstrap_servers)
    config.update(GROUP_TIMEOUTS)
    config.update(
        {
            "group.id": group_id,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
            "enable.partition.eof": False,
            # A consumer whose local queue is past librdkafka's thresholds
            # (queued.min.messages, queued.max.messages.kbytes) fetches
            # nothing more for this long. The default, 1000 ms, stalled a
            # worker with a backlog for 0.6-0.8 s once per ~150,000
            # messages, and a tracker reading a backlog of markers alike.
            "fetch.queue.backoff.ms": 10,
        }
    )
    config.update(extra or {})
    return config


def producer_config(
    bootstrap_servers: str,
    transactional_id: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> KafkaConfig:
    """An idempotent producer; transactional when ``transactional_id`` is given."""
    config = client_config(bootstrap_servers)
    # murmur2_random is the Java client's partitioner: a key written by a Java
    # or Go client and edited or cancelled by us lands on the same partition
    # (librdkafka's default, consistent_random, would not; etf1 issue #53).
    config.update(
        {
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 5,
            "partitioner": "murmur2_random",
        }
    )
    if transactional_id:
        config["transactional.id"] = transactional_id
        # A transaction begun while the previous one's commit markers are still
        # being written gets CONCURRENT_TRANSACTIONS and is retried after this:
        # librdkafka's 100 ms default put that wait on every back-to-back
        # redelivery and firing (scheduler p99 lateness 143 ms; 61 ms with 2).
        config["retry.backoff.ms"] = 2
    config.update(extra or {})
    return config
