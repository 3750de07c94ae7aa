"""The worker's metrics port: served when free, and never a reason to stop."""

import logging
import socket
import urllib.request

import pytest

from kmqadmin.kafka.embedded.broker import free_port
from kmqadmin.workers import metrics_port
from kmqadmin.workers.host import ServiceHost


def test_serves_the_hosted_services_families(settings) -> None:
    settings.KMQ_WORKER_METRICS_PORT = port = free_port()
    server = metrics_port.serve(ServiceHost())
    assert server is not None
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            text = response.read().decode()
        assert "# TYPE kmqadmin_tracker_acked_total counter" in text
        assert "# TYPE kmqadmin_schedules_lateness_seconds histogram" in text
    finally:
        metrics_port.close(server)


def test_a_taken_port_is_logged_and_the_worker_goes_on(
    settings, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        settings.KMQ_WORKER_METRICS_PORT = taken.getsockname()[1]
        with caplog.at_level(logging.ERROR, logger=metrics_port.__name__):
            assert metrics_port.serve(ServiceHost()) is None
    assert "no metrics port" in caplog.text


def test_port_zero_serves_nothing(settings) -> None:
    settings.KMQ_WORKER_METRICS_PORT = 0
    assert metrics_port.serve(ServiceHost()) is None
