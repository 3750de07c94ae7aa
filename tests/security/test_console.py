"""The registry, the admin and the API never show a cluster's secret: they
hold only where it is, and a secret typed into a reference field by mistake
is refused without being rendered back."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from kmqadmin.console.models import Cluster, Queue
from tests.console.conftest import client_as
from tests.security.conftest import PASSWORD

pytestmark = pytest.mark.django_db

TYPED_SECRET = "hunter2-Zq9"


def _cluster_form(**changes: str) -> dict[str, str]:
    return {
        "name": "secured",
        "bootstrap_servers": "broker:9093",
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_username": "app",
        "sasl_password": "env:KAFKA_PASSWORD",
        **changes,
    }


def test_the_registry_shows_where_a_secret_is_never_the_secret(secure_cluster: Cluster) -> None:
    page = client_as("admin").get(f"/registry/cluster/{secure_cluster.pk}")
    assert page.status_code == 200
    assert b"env:KMQ_TEST_SASL_PASSWORD" in page.content
    assert PASSWORD.encode() not in page.content


def test_a_secret_typed_in_instead_of_its_reference_is_refused_and_not_rendered() -> None:
    form = _cluster_form(sasl_password=TYPED_SECRET)
    page = client_as("admin").post("/registry/cluster/new", form)
    assert page.status_code == 400
    assert b"never the secret itself" in page.content
    assert TYPED_SECRET.encode() not in page.content
    assert not Cluster.objects.exists()


def test_the_registry_saves_a_secured_cluster() -> None:
    page = client_as("admin").post("/registry/cluster/new", _cluster_form())
    assert page.status_code == 302
    saved = Cluster.objects.get()
    assert (saved.security_protocol, saved.sasl_password) == ("SASL_SSL", "env:KAFKA_PASSWORD")


def test_the_admin_never_renders_a_typed_secret_back() -> None:
    superuser = User.objects.create_superuser("root")
    client = Client()
    client.force_login(superuser)
    page = client.post("/admin/console/cluster/add/", _cluster_form(sasl_password=TYPED_SECRET))
    assert page.status_code == 200  # the form again, with the error
    assert b"never the secret itself" in page.content
    assert TYPED_SECRET.encode() not in page.content


def test_the_api_never_returns_a_secret(secure_queue: Queue) -> None:
    from tests.api.conftest import client_as as api_client_as

    viewer = api_client_as("viewer")
    for path in ("/api/v1/queues/", f"/api/v1/queues/{secure_queue.topic}/stats"):
        response = viewer.get(path)
        assert response.status_code == 200, response.content
        assert PASSWORD.encode() not in response.content
