"""The API's share-group endpoints on the real broker: the group of a running
ShareConsumer, and the admin-only, audited reset of its start offset."""

import pytest

from kmqadmin.console.models import AuditEntry, Cluster, Queue
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from tests.api.conftest import client_as
from tests.process import wait_for
from tests.share_helpers import Sharer

pytestmark = pytest.mark.django_db


@pytest.fixture
def share_queue(kafka: EmbeddedBroker, topic: str) -> Queue:
    cluster = Cluster.objects.create(name="local", bootstrap_servers=kafka.bootstrap_servers)
    queue = Queue.objects.create(
        cluster=cluster, topic=topic, group_id=f"{topic}-workers", backend="share"
    )
    queue.config().ensure_topics(partitions=1)
    return queue


def sharer(kafka: EmbeddedBroker, queue: Queue) -> Sharer:
    return Sharer(kafka.bootstrap_servers, queue.group_id, queue.topic, client_id="api-worker")


def test_the_group_of_a_running_consumer(kafka: EmbeddedBroker, share_queue: Queue) -> None:
    viewer = client_as("viewer")
    url = f"/api/v1/queues/{share_queue.topic}/share-group"
    assert viewer.get(url).json()["group"] == {
        "exists": False,
        "state": "",
        "epoch": 0,
        "members": [],
    }
    with sharer(kafka, share_queue) as consumer:
        body = wait_for(lambda: assigned(consumer, viewer.get(url).json()), 30, "the member")
    [member] = body["group"]["members"]
    assert member["client_id"] == "api-worker"
    assert member["assignment"] == [{"topic": share_queue.topic, "partition": 0}]
    assert body["settings"]["auto_offset_reset"] == "earliest"
    assert [p["partition"] for p in body["progress"]] == [0]
    assert len(body["counts"]["minutes"]) == 61 and body["errors"] == []  # and this minute


def assigned(consumer: Sharer, body: dict) -> dict | None:
    """``body`` once its one member has its partitions; the consumer polls
    meanwhile, as a worker would."""
    consumer.poll_once()
    members = body["group"]["members"]
    return body if members and members[0]["assignment"] else None


def test_reset_needs_an_admin_is_refused_while_connected_and_is_audited(
    kafka: EmbeddedBroker, share_queue: Queue
) -> None:
    url = f"/api/v1/queues/{share_queue.topic}/share-group/reset"
    for role in ("viewer", "operator"):
        assert client_as(role).post(url, {"to": "earliest"}, format="json").status_code == 403
    admin = client_as("admin")
    bad = admin.post(url, {"to": "time"}, format="json")
    assert bad.status_code == 400 and "at" in bad.json()
    assert admin.post(url, {"to": "soon"}, format="json").status_code == 400
    with sharer(kafka, share_queue) as consumer:
        consumer.poll_once()
        wait_for(
            lambda: admin.get(url.removesuffix("/reset")).json()["group"]["members"],
            30,
            "the member",
        )
        refused = admin.post(url, {"to": "earliest"}, format="json")
    assert refused.status_code == 409 and "not empty" in refused.json()["detail"]
    wait_for(
        lambda: not admin.get(url.removesuffix("/reset")).json()["group"]["members"],
        30,
        "the member to leave",
    )
    planned = admin.post(url, {"to": "earliest", "dry_run": True}, format="json")
    assert planned.status_code == 200 and planned.json()["dry_run"] is True
    assert planned.json()["offsets"] == {f"{share_queue.topic}:0": 0}
    assert not AuditEntry.objects.filter(action="reset group offsets").exists()
    done = admin.post(url, {"to": "time", "at": "2020-01-01T00:00:00Z"}, format="json")
    assert done.status_code == 200
    assert done.json()["offsets"] == {f"{share_queue.topic}:0": 0} and done.json()["errors"] == {}
    entry = AuditEntry.objects.filter(action="reset group offsets").latest("pk")
    assert entry.status == "done" and entry.user.username == "admin"
    assert entry.before["to"] == {
        "mode": "time",
        "value": 1577836800000,
        "topic": share_queue.topic,
    }


def test_a_kmq_queue_has_no_share_group(registered: Queue) -> None:
    answer = client_as("viewer").get(f"/api/v1/queues/{registered.topic}/share-group")
    assert answer.status_code == 409 and "no share group" in answer.json()["detail"]
