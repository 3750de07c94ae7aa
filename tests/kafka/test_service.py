"""The services' crash-restart loop (pure logic: no Kafka involved)."""

import threading
import time

import pytest
from confluent_kafka import KafkaException

from kmqadmin.kafka.ownership import restart_pause
from kmqadmin.kafka.ownership.service import Service
from tests.process import wait_for


class Flaky(Service):
    """Crashes ``crashes`` times, then serves until stopped."""

    def __init__(self, crashes: int, error: type[Exception] = RuntimeError) -> None:
        super().__init__()
        self.crashes, self.error = crashes, error
        self.lives = 0
        self.serving = threading.Event()

    def serve(self) -> None:
        self.lives += 1
        if self.lives <= self.crashes:
            raise self.error(f"crash {self.lives}")
        self.serving.set()
        self._stop.wait()


@pytest.fixture(autouse=True)
def quick_restarts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(restart_pause, "FIRST_S", 0.01)
    monkeypatch.setattr(restart_pause, "LONGEST_S", 0.05)


def test_a_crashed_service_is_restarted_until_it_serves() -> None:
    flaky = Flaky(crashes=3)
    flaky.start()
    try:
        wait_for(flaky.serving.is_set, 10, "the fourth life to serve")
    finally:
        flaky.stop(5)
    assert (flaky.lives, flaky.restarts) == (4, 3)
    assert flaky._thread is None


def test_stop_ends_the_wait_between_restarts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(restart_pause, "FIRST_S", 3600)  # a pause stop() must cut short
    flaky = Flaky(crashes=10**9)
    flaky.start()
    wait_for(lambda: flaky.lives >= 1, 10, "a crash")
    thread = flaky._thread
    started = time.monotonic()
    flaky.stop(5)  # during the pause after the first crash
    assert thread is not None and not thread.is_alive()
    assert time.monotonic() - started < 1
    assert flaky.lives == 1


def test_a_kafka_error_is_one_line_and_anything_else_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    for error in (KafkaException, RuntimeError):
        flaky = Flaky(crashes=1, error=error)
        flaky.start()
        try:
            wait_for(flaky.serving.is_set, 10, "the second life to serve")
        finally:
            flaky.stop(5)
    kafka, other = caplog.records
    assert "stopped on a Kafka error (crash 1)" in kafka.getMessage()
    assert (kafka.levelname, kafka.exc_info) == ("WARNING", None)
    assert "crashed; restarting" in other.getMessage()
    assert other.levelname == "ERROR" and other.exc_info is not None
