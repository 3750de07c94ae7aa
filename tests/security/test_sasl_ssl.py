"""A queue on a SASL_SSL cluster (SCRAM-SHA-512, a CA, a client certificate)
registered in the console: every client the queue needs gets the cluster's
settings, and a refused login is one error naming the cluster and setting."""

import time

import pytest

from bench.common import read_topic
from kmqadmin.console.cli.doctor import run_checks
from kmqadmin.console.models import Cluster, Queue
from kmqadmin.kafka.client.errors import ClusterSettingError
from kmqadmin.kmq import QueueClient, QueueConfig, RedeliveryTracker
from tests.process import wait_for
from tests.queue_helpers import poll_until, send
from tests.security.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def test_a_queue_works_end_to_end(secure_queue: Queue) -> None:
    config = secure_queue.config()
    assert config.kafka_config["security.protocol"] == "SASL_SSL"
    tracker = RedeliveryTracker(config)
    tracker.start()
    try:
        send(config, 2)
        with QueueClient(config) as client:
            first = poll_until(client, 2)
            acked, left = sorted(first, key=lambda m: m.value)
            client.ack(acked)
            [copy] = poll_until(client, 1, timeout=20)  # the tracker redelivered it
            assert (copy.id, copy.delivery_count) == (left.id, 2)
        # Not acked again, past max_redeliveries: to the DLQ.
        dead = wait_for(lambda: _dlq(config), 30, "the DLQ record")
        assert [(d.key(), d.value()) for d in dead] == [(left.key, left.value)]
    finally:
        tracker.stop()
    assert tracker.stats().redelivered >= 1


def _dlq(config: QueueConfig) -> list:
    return read_topic(config.bootstrap_servers, config.dlq_topic, 3, config.kafka_config)


def test_a_wrong_password_is_one_error_naming_cluster_and_setting(
    secure_queue: Queue, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KMQ_TEST_SASL_PASSWORD", "not-the-password")
    queue = Queue.objects.select_related("cluster").get(pk=secure_queue.pk)
    started = time.monotonic()
    with pytest.raises(ClusterSettingError) as refused:
        queue.config()
    assert time.monotonic() - started < 10
    message = str(refused.value)
    assert "cluster secured" in message
    assert "sasl_password (env:KMQ_TEST_SASL_PASSWORD)" in message
    assert "SCRAM-SHA-512 login as user kmq-app refused" in message
    assert "not-the-password" not in message
    assert "SASL authentication" not in capfd.readouterr().err  # no librdkafka retry log


def test_an_unknown_ca_is_one_error_naming_the_tls_settings(
    secure_cluster: Cluster, secure_kafka, tmp_path
) -> None:
    secure_cluster.ssl_ca_file = str(secure_kafka.certificates.client_cert)  # not a CA of it
    with pytest.raises(ClusterSettingError, match="cluster secured: ssl_ca_file"):
        secure_cluster.kafka_config()


def test_doctor_checks_a_secured_cluster_with_its_settings(
    secure_queue: Queue, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [check.line() for check in run_checks()]
    assert any(f"{secure_queue.cluster.bootstrap} answers" in line for line in lines)
    assert any(f"ok  topic        {secure_queue.dlq_topic}" in line for line in lines), lines
    monkeypatch.delenv("KMQ_TEST_SASL_PASSWORD")
    failed = [line for line in map(str, (c.line() for c in run_checks())) if "FAIL" in line]
    assert any("cluster secured: sasl_password" in line for line in failed), failed
    assert any("KMQ_TEST_SASL_PASSWORD is not set" in line for line in failed), failed
    assert not any(PASSWORD in line for line in failed)
