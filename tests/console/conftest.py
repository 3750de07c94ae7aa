"""Console fixtures: a registered queue on the embedded broker, users by role."""

import pytest
from django.test import Client

from kmqadmin.console.models import Cluster, Queue
from kmqadmin.kafka.embedded import EmbeddedBroker
from tests.kmq.conftest import tracker  # noqa: F401 (fixture, served for the console tests)
from tests.users import user_with


def client_as(role: str | None, **kwargs) -> Client:
    client = Client(**kwargs)
    if role is not None:
        client.force_login(user_with(role))
    return client


@pytest.fixture
def registered(kafka: EmbeddedBroker, topic: str) -> Queue:
    cluster = Cluster.objects.create(name="local", bootstrap_servers=kafka.bootstrap_servers)
    queue = Queue.objects.create(
        cluster=cluster, topic=topic, group_id=f"{topic}-workers", message_timeout_ms=600_000
    )
    queue.config().ensure_topics(partitions=3)
    return queue


@pytest.fixture
def queue(registered: Queue):
    """The registered queue's configuration (the ``tracker`` fixture serves it)."""
    return registered.config()
