"""How long an owner's transaction may stay open.

An owner killed mid-transaction leaves it open, and no read_committed
reader of its partitions reads past it until it is aborted. A restarted
owner in the same slot aborts it as it starts (owned.py); one that never
comes back leaves it to the broker, which aborts a transaction once it has
outlived its timeout, at its next check for expired transactions (every
``transaction.abort.timed.out.transaction.cleanup.interval.ms``). The group
hands the dead owner's partitions on a session timeout after its last
heartbeat, which may be a heartbeat interval before its death. So the
timeout is the session timeout less both intervals: the transaction is
aborted by the time the group has noticed the death, and readers wait no
longer than with one transactional id per partition, whose heir aborts it
once assigned (the design before issue 28; bench/recovery.py measures both).

The cleanup interval is the cluster's, read from its brokers once per
process (a static broker setting). A short timeout costs only this: a
transaction the broker stalls past it is aborted, and its work done again.
"""

import logging
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaException

from kmqadmin.kafka.admin.broker_settings import broker_setting
from kmqadmin.kafka.client.clock import to_ms
from kmqadmin.kafka.client.config import GROUP_TIMEOUTS, session_timeout_s

log = logging.getLogger(__name__)

HEARTBEAT = "heartbeat.interval.ms"
CLEANUP_INTERVAL = "transaction.abort.timed.out.transaction.cleanup.interval.ms"
KAFKA_DEFAULT_CLEANUP_INTERVAL_MS = 10_000
READ_TIMEOUT_S = 10.0

# Per bootstrap list: the broker setting cannot change without a restart.
_intervals: dict[str, int] = {}
# Bootstrap lists whose too-long interval was warned of: once per process,
# not once per owner started.
_warned: set[str] = set()


def transaction_timeout_ms(bootstrap_servers: str, kafka_config: Mapping[str, Any]) -> int:
    """The session timeout less the heartbeat and cleanup intervals; never
    under half the session timeout, so a transaction always has time to
    finish (a warning then says how long readers may wait, and what to set)."""
    session_ms = to_ms(session_timeout_s(kafka_config))
    heartbeat_ms = int(kafka_config.get(HEARTBEAT, GROUP_TIMEOUTS[HEARTBEAT]))
    interval_ms = cleanup_interval_ms(bootstrap_servers, kafka_config)
    timeout_ms, floor_ms = session_ms - heartbeat_ms - interval_ms, session_ms // 2
    if timeout_ms >= floor_ms:
        return timeout_ms
    if bootstrap_servers in _warned:
        return floor_ms
    _warned.add(bootstrap_servers)
    log.warning(
        "the brokers check for expired transactions every %d ms, too seldom for a %d ms "
        "session timeout: an owner killed mid-transaction and not restarted holds back "
        "readers of its partitions up to %d ms. Set %s to 1000 on the brokers "
        "(docs/production.md)",
        interval_ms,
        session_ms,
        floor_ms + interval_ms,
        CLEANUP_INTERVAL,
    )
    return floor_ms


def cleanup_interval_ms(bootstrap_servers: str, kafka_config: Mapping[str, Any]) -> int:
    """The longest interval any broker of the cluster checks for expired
    transactions at; Kafka's default when the brokers will not say (no
    DescribeConfigs permission, say), which is logged."""
    if (known := _intervals.get(bootstrap_servers)) is not None:
        return known
    try:
        values = broker_setting(bootstrap_servers, kafka_config, CLEANUP_INTERVAL, READ_TIMEOUT_S)
        interval = max(int(value) for value in values.values())
    except (KafkaException, TimeoutError, KeyError, ValueError) as exc:
        log.warning(
            "cannot read %s from the brokers (%s); assuming Kafka's default, %d ms",
            CLEANUP_INTERVAL,
            exc,
            KAFKA_DEFAULT_CLEANUP_INTERVAL_MS,
        )
        return KAFKA_DEFAULT_CLEANUP_INTERVAL_MS
    _intervals[bootstrap_servers] = interval
    return interval
