"""The registry saves only what Kafka and the queue core accept: in the
console's forms and in /admin/ alike (model validators)."""

import pytest
from django.contrib.auth.models import User

from kmqadmin.console.models import Cluster, Queue
from tests.console.conftest import client_as

pytestmark = pytest.mark.django_db

RUNNABLE = {
    "group_id": "g",
    "partitions": "3",
    "message_timeout_ms": "30000",
    "max_redeliveries": "3",
    "backoff_initial_ms": "",
    "backoff_multiplier": "2.0",
    "backoff_max_ms": "3600000",
}


@pytest.fixture
def cluster() -> Cluster:
    # Never contacted: no form here is valid, so nothing creates topics.
    return Cluster.objects.create(name="local", bootstrap_servers="127.0.0.1:1")


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"topic": "two words"}, b"a-z, A-Z"),
        ({"topic": ".."}, b"is not a topic name Kafka allows"),
        ({"topic": "q" * 237}, b"__undelivered"),
        ({"message_timeout_ms": "0"}, b"greater than or equal to 1"),
        ({"backoff_initial_ms": "1000", "backoff_multiplier": "0.5"}, b"at least 1"),
        ({"backoff_initial_ms": "5000", "backoff_max_ms": "1000"}, b"initial_ms &lt;= max_ms"),
        ({"dlq_topic_override": "a b"}, b"a-z, A-Z"),
        ({"backend": "sqs"}, b"sqs is not one of the available choices"),
        (
            {"backend": "share", "markers_topic_override": "m"},
            b"a share queue has no markers topic",
        ),
    ],
)
def test_a_queue_that_cannot_run_is_not_saved(cluster: Cluster, changes: dict, says: bytes) -> None:
    fields = {"cluster": str(cluster.pk), "topic": "orders", **RUNNABLE, **changes}
    answer = client_as("admin").post("/registry/queue/new", fields)
    assert answer.status_code == 400 and says in answer.content
    superuser = User.objects.create_superuser("root")
    admin_site = client_as(None)
    admin_site.force_login(superuser)
    answer = admin_site.post("/admin/console/queue/add/", fields)
    assert answer.status_code == 200 and says in answer.content
    assert not Queue.objects.exists()
