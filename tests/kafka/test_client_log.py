"""librdkafka's log goes through Python's logging, a broker's failures once a minute."""

import logging
import time

import pytest
from confluent_kafka import Consumer, Producer

from kmqadmin.kafka.client.client_log import LOGGER, OncePerMinute, Routine
from kmqadmin.kafka.client.config import consumer_config, producer_config
from kmqadmin.kafka.embedded.broker import free_port


def record(facility: str, text: str) -> logging.LogRecord:
    """As confluent-kafka logs a line: a format and (facility, client, text)."""
    return logging.LogRecord(
        "kmqadmin.librdkafka", logging.ERROR, "", 0, "%s [%s] %s", (facility, "c#1", text), None
    )


def failure(broker: str) -> logging.LogRecord:
    return record("FAIL", f"[thrd:{broker}]: {broker}: Connect failed: Connection refused")


def test_one_failure_per_broker_per_minute_then_the_count_held_back() -> None:
    once = OncePerMinute(every_s=0.2)
    assert once.filter(failure("a:1/1"))
    assert [once.filter(failure("a:1/1")) for _ in range(5)] == [False] * 5
    assert once.filter(failure("b:2/2"))  # another broker is said at once
    assert once.filter(record("COMMIT", "anything"))  # not a failure: never held back
    time.sleep(0.2)  # the minute (here 0.2 s) itself, not a wait for a condition
    said = failure("a:1/1")
    assert once.filter(said)
    assert said.getMessage().endswith("(and 5 more like it held back since the last)")


def test_clients_on_a_dead_broker_log_through_the_filter_not_per_attempt(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Ten clients of each kind retrying a broker that is not there for 3 s:
    librdkafka's own stderr would have a line per attempt of each."""
    dead = f"127.0.0.1:{free_port()}"
    producers = [Producer(producer_config(dead)) for _ in range(10)]
    consumers = [Consumer(consumer_config(dead, "g")) for _ in range(10)]
    for consumer in consumers:
        consumer.subscribe(["t"])
    caplog.set_level(logging.DEBUG, LOGGER.name)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:  # the clients hand their log over when polled
        for producer in producers:
            producer.poll(0)
        for consumer in consumers:
            consumer.poll(0)
        time.sleep(0.05)
    for consumer in consumers:
        consumer.close()
    failures = [r for r in caplog.records if r.name == LOGGER.name and r.args[0] == "FAIL"]
    assert failures, "no failure reached Python's logging"
    brokers = {r.args[2].split(": ", 1)[0] for r in failures}
    assert len(failures) == len(brokers)  # once per broker in the minute, for all 20 clients


def test_a_coordinator_still_loading_is_info_and_other_lines_keep_their_level() -> None:
    """librdkafka retries it by itself: on every first `kmq run` it was a WARNING."""
    loading = record(
        "GETPID",
        "[thrd:main]: Failed to acquire idempotence PID from broker b:1/1: "
        "Broker: Coordinator load in progress: retrying",
    )
    loading.levelno, loading.levelname = logging.WARNING, "WARNING"
    other = record("GETPID", "[thrd:main]: Failed to acquire idempotence PID: Broker: fenced")
    level = LOGGER.level
    try:
        LOGGER.setLevel(logging.WARNING)  # `kmq run`'s children: not said
        assert not Routine().filter(loading) and Routine().filter(other)
        assert (loading.levelno, loading.levelname) == (logging.INFO, "INFO")
        assert other.levelno == logging.ERROR
        LOGGER.setLevel(logging.INFO)  # said, as INFO
        loading.levelno = logging.WARNING
        assert Routine().filter(loading) and loading.levelno == logging.INFO
    finally:
        LOGGER.setLevel(level)
