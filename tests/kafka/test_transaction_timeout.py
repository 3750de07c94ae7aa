"""An owner's transaction timeout, from the cluster's cleanup interval."""

import logging
import socket

import pytest

from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kafka.ownership import transaction_timeout
from kmqadmin.kafka.ownership.transaction_timeout import (
    CLEANUP_INTERVAL,
    cleanup_interval_ms,
    transaction_timeout_ms,
)


@pytest.fixture
def unreachable() -> str:
    """A bootstrap address nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def test_read_from_the_brokers(kafka: EmbeddedBroker) -> None:
    """The embedded broker checks every second: 6 s session, 1 s heartbeat, 1 s check."""
    assert cleanup_interval_ms(kafka.bootstrap_servers, {}) == 1000
    assert transaction_timeout_ms(kafka.bootstrap_servers, {}) == 4000
    longer = {"session.timeout.ms": 10_000, "heartbeat.interval.ms": 3000}
    assert transaction_timeout_ms(kafka.bootstrap_servers, longer) == 6000


def test_brokers_that_will_not_say(
    unreachable: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kafka's default is assumed, not remembered, and the setting is named
    (once per process); at 10 s against a 6 s session the floor (half the
    session) applies."""
    monkeypatch.setattr(transaction_timeout, "READ_TIMEOUT_S", 1.0)
    with caplog.at_level(logging.WARNING, transaction_timeout.__name__):
        assert transaction_timeout_ms(unreachable, {}) == 3000
        assert transaction_timeout_ms(unreachable, {}) == 3000
    assert unreachable not in transaction_timeout._intervals
    warnings = [r.getMessage() for r in caplog.records]
    assert sum(f"cannot read {CLEANUP_INTERVAL}" in w for w in warnings) == 2
    assert sum(f"Set {CLEANUP_INTERVAL} to 1000" in w for w in warnings) == 1


def test_kafka_defaults(unreachable: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kafka's own group and broker defaults (45 s session, 3 s heartbeat,
    10 s check) leave a transaction 32 s."""
    monkeypatch.setitem(transaction_timeout._intervals, unreachable, 10_000)
    defaults = {"session.timeout.ms": 45_000, "heartbeat.interval.ms": 3000}
    assert transaction_timeout_ms(unreachable, defaults) == 32_000
