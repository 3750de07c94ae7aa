"""Console tests' clients by role; their ``queue`` is the registered one
(tests/fixtures/registry.py)."""

import pytest
from django.test import Client

from kmqadmin.console.models import Queue
from tests.users import user_with


def client_as(role: str | None, **kwargs) -> Client:
    client = Client(**kwargs)
    if role is not None:
        client.force_login(user_with(role))
    return client


def register_schedules(bootstrap_servers: str, topic: str) -> Client:
    """A cluster and a schedules topic registered through the registry, as an
    admin does it; returns the admin's client."""
    admin = client_as("admin")
    cluster = {"name": "main", "bootstrap_servers": bootstrap_servers}
    assert admin.post("/registry/cluster/new", cluster).status_code == 302
    cluster_id = str(admin.get("/registry/").context["clusters"][0].pk)
    fields = {"cluster": cluster_id, "topic": topic, "group_id": f"{topic}-s", "partitions": 1}
    assert admin.post("/registry/schedules/new", fields).status_code == 302
    return admin


@pytest.fixture
def queue(registered: Queue):
    """The registered queue's configuration (the ``tracker`` fixture serves it)."""
    return registered.config()
