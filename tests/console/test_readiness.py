"""/readyz: the database and every cluster answer, or 503 naming which does
not, within two seconds also when a broker is stalled; /healthz from the
first request on."""

import subprocess
import sys
import time

import pytest
from django.test import Client

from kmqadmin.console.models import Cluster
from kmqadmin.console.services.clusters.readiness import READY_WITHIN_S
from kmqadmin.kafka.embedded.broker import EmbeddedBroker, free_port
from tests.users import user_with

pytestmark = pytest.mark.django_db


def ready(client: Client) -> tuple[int, dict, str | None, float]:
    started = time.monotonic()
    response = client.get("/readyz")
    return (
        response.status_code,
        response.json(),
        response.headers.get("Retry-After"),
        time.monotonic() - started,
    )


def test_ready_when_the_database_and_every_cluster_answer(kafka: EmbeddedBroker) -> None:
    Cluster.objects.create(name="main", bootstrap_servers=kafka.bootstrap_servers)
    status, body, retry, _ = ready(Client())
    assert (status, body["status"], retry) == (200, "ready", None)
    assert body["checks"] == {"database": {"ok": True}, "kafka:main": {"ok": True}}


def test_a_stalled_cluster_and_an_absent_one_are_unready_within_the_bound(
    kafka: EmbeddedBroker, stalled: str
) -> None:
    Cluster.objects.create(name="main", bootstrap_servers=kafka.bootstrap_servers)
    Cluster.objects.create(name="stalled", bootstrap_servers=stalled)
    Cluster.objects.create(name="gone", bootstrap_servers=f"127.0.0.1:{free_port()}")
    client = Client()
    client.force_login(user_with("viewer"))
    status, body, retry, took = ready(client)
    assert (status, body["status"], retry) == (503, "unready", "5")
    assert took < READY_WITHIN_S + 1  # the probes' bound, and slack for a busy machine
    checks = body["checks"]
    assert checks["kafka:main"]["ok"] and checks["database"]["ok"]
    assert not checks["kafka:stalled"]["ok"] and not checks["kafka:gone"]["ok"]
    assert f"Disconnected from Kafka at {stalled} since" in checks["kafka:stalled"]["detail"]


def test_an_anonymous_probe_reads_the_status_and_no_address(stalled: str) -> None:
    Cluster.objects.create(name="stalled", bootstrap_servers=stalled)
    status, body, _, _ = ready(Client())
    assert status == 503
    assert body["checks"]["kafka:stalled"] == {"ok": False}
    assert stalled not in str(body)


def test_the_web_process_has_its_views_before_its_first_request() -> None:
    """A liveness probe's first /healthz must not wait for Django to import
    every view (1.6 s on an idle machine): the ASGI application does it."""
    loaded = "import sys, kmqadmin.asgi; print('kmqadmin.console.views.health' in sys.modules)"
    answer = subprocess.run([sys.executable, "-c", loaded], capture_output=True, text=True)
    assert (answer.returncode, answer.stdout.strip()) == (0, "True"), answer.stderr
