"""Who may scrape /metrics, and what it says when a part is away."""

import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.test import Client
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from kmqadmin.console.metrics.queues import DEADLINE_S
from kmqadmin.console.models import Cluster, Queue
from kmqadmin.kafka.embedded.broker import free_port
from kmqadmin.metrics.exposition import registry
from tests.console.conftest import client_as
from tests.process import ROOT, env

pytestmark = pytest.mark.django_db
ELSEWHERE = {"REMOTE_ADDR": "203.0.113.9"}


def test_loopback_scrapes_without_login_and_gets_prometheus_text() -> None:
    response = Client().get("/metrics")  # the test client comes from 127.0.0.1
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    assert b"# TYPE kmqadmin_http_requests_total counter" in response.content


def test_anyone_else_is_refused_with_the_reason(settings) -> None:
    refused = Client(**ELSEWHERE).get("/metrics")
    assert refused.status_code == 403
    assert b"KMQ_METRICS_TOKEN" in refused.content
    settings.KMQ_METRICS_TOKEN = "s3cret"
    unauthorised = Client(**ELSEWHERE).get("/metrics", headers={"Authorization": "Bearer nope"})
    assert unauthorised.status_code == 401
    assert unauthorised["WWW-Authenticate"].startswith("Bearer")


def test_a_bearer_token_or_a_console_user_may_scrape_from_anywhere(settings) -> None:
    settings.KMQ_METRICS_TOKEN = "s3cret"
    bearer = {"Authorization": "Bearer s3cret"}
    assert Client(**ELSEWHERE).get("/metrics", headers=bearer).status_code == 200
    assert client_as("viewer", **ELSEWHERE).get("/metrics").status_code == 200


def test_behind_a_proxy_loopback_proves_nothing(settings) -> None:
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    assert Client().get("/metrics").status_code == 403


def test_a_queue_whose_cluster_is_away_reads_as_down_not_as_an_error() -> None:
    cluster = Cluster.objects.create(name="gone", bootstrap_servers=f"127.0.0.1:{free_port()}")
    Queue.objects.create(cluster=cluster, topic="unreachable", group_id="g")
    began = time.monotonic()
    response = Client().get("/metrics")
    assert time.monotonic() - began < DEADLINE_S + 2  # within a scrape timeout
    assert response.status_code == 200
    samples = {
        (s.name, s.labels.get("queue")): s.value
        for family in text_string_to_metric_families(response.content.decode())
        for s in family.samples
    }
    assert samples[("kmqadmin_queue_stats_up", "unreachable")] == 0
    assert ("kmqadmin_queue_depth", "unreachable") not in samples


WRITER = """
from kmqadmin.console.metrics.http import REQUESTS
from kmqadmin.workers.job_metrics import JOB_SECONDS
REQUESTS.labels("GET", "console:index", "200").inc({n})
JOB_SECONDS.labels("some.task", "success").observe(0.2)
"""


def test_multiprocess_mode_adds_up_what_each_process_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in (3, 4):  # two processes, each writing its own files, then gone
        written = subprocess.run(
            [sys.executable, "-c", WRITER.format(n=n)],
            cwd=ROOT,
            env=env(PROMETHEUS_MULTIPROC_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE=""),
            capture_output=True,
            text=True,
        )
        assert written.returncode == 0, written.stderr
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    text = generate_latest(registry()).decode()
    assert (
        'kmqadmin_http_requests_total{method="GET",route="console:index",status="200"} 7.0' in text
    )
    assert 'kmqadmin_job_duration_seconds_count{outcome="success",task="some.task"} 2.0' in text
