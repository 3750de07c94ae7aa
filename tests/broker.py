"""The suite's Apache Kafka: one broker over TCP, shared by every test process.

Under pytest-xdist (`make test` runs the suite on several processes) the
controller starts the one embedded broker before it starts its workers, which
inherit its address in SUITE_BOOTSTRAP; a worker never starts a broker of its
own. Run without workers, the session starts it on first use. A cluster the
user names with KAFKA_BOOTSTRAP_SERVERS is used instead of either.
"""

import gc
import os
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from kmqadmin.console.services.clusters import clients
from kmqadmin.kafka.embedded.broker import EmbeddedBroker

# Not KAFKA_BOOTSTRAP_SERVERS: the `kmq run` a test starts reads that one, and
# must keep starting its own broker when the test means it to.
SUITE_BOOTSTRAP = "KMQ_SUITE_BOOTSTRAP_SERVERS"
# The tests write records stamped at fixed times long past (exact assertions
# on timestamps, minutes and seeks by time). Kafka deletes records older than
# its retention (7 days), the active segment too, at its retention checks (30 s
# after start, then every 5 minutes): a test caught by one found its topic
# empty. On the suite's brokers records never expire by time (the pipeline's
# topics said so for themselves already: tests/pipeline/conftest.py).
SUITE_SETTINGS = {"log.retention.ms": "-1"}
_BROKER = pytest.StashKey[EmbeddedBroker]()


@dataclass(frozen=True)
class ExternalBroker:
    """A cluster this process did not start: the user's, or the controller's."""

    bootstrap_servers: str


def _controls_workers(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput") and bool(config.getoption("numprocesses", None))


def pytest_configure(config: pytest.Config) -> None:
    if _controls_workers(config) and not os.environ.get("KAFKA_BOOTSTRAP_SERVERS"):
        broker = EmbeddedBroker(overrides=SUITE_SETTINGS).start()
        config.stash[_BROKER] = broker
        os.environ[SUITE_BOOTSTRAP] = broker.bootstrap_servers


def pytest_unconfigure(config: pytest.Config) -> None:
    if broker := config.stash.get(_BROKER, None):
        broker.stop()


@pytest.fixture(scope="session")
def kafka() -> Iterator[EmbeddedBroker | ExternalBroker]:
    """The cluster KAFKA_BOOTSTRAP_SERVERS names, else the controller's broker,
    else one embedded Apache Kafka for this session on free loopback ports."""
    if bootstrap := os.environ.get("KAFKA_BOOTSTRAP_SERVERS") or os.environ.get(SUITE_BOOTSTRAP):
        yield ExternalBroker(bootstrap)
        return
    with EmbeddedBroker(overrides=SUITE_SETTINGS) as broker:
        yield broker
        # The web process's kept clients, and clients the tests dropped but a
        # reference cycle keeps (a producer's delivery callback is a bound
        # method), would otherwise outlive the broker and fill the end of the
        # run with their reconnect attempts.
        clients.close()
        gc.collect()


@pytest.fixture(scope="module")
def own_broker() -> Iterator[EmbeddedBroker]:
    """A broker of the module's own, to stop or pause: the session's serves
    the others."""
    with EmbeddedBroker(overrides=SUITE_SETTINGS) as broker:
        yield broker
