"""The queues API against the real broker, a real tracker and the test database."""

import base64

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from kmqadmin.console.models import AuditEntry, Cluster, Queue
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import Message, QueueClient, QueueConfig, QueueProducer
from tests.api.conftest import client_as
from tests.kafka_helpers import read_all
from tests.process import wait_for
from tests.queue_helpers import poll_until, send

pytestmark = pytest.mark.django_db


def test_anonymous_gets_401_and_a_viewer_may_read_but_not_act(queue: QueueConfig) -> None:
    assert client_as(None).get("/api/v1/queues/").status_code == 401
    viewer = client_as("viewer")
    listed = viewer.get("/api/v1/queues/")
    assert listed.status_code == 200
    assert [q["topic"] for q in listed.json()] == [queue.topic]
    refused = viewer.post(f"/api/v1/queues/{queue.topic}/messages/", {"value": "x"}, "json")
    assert refused.status_code == 403
    assert "role" in refused.json()["detail"]
    assert viewer.get("/api/v1/schema/").status_code == 200


def test_a_service_enqueues_with_a_token(queue: QueueConfig) -> None:
    user = User.objects.create_user("billing-service")
    user.groups.add(Group.objects.get(name="operator"))
    service = APIClient()
    service.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    body = {"value": base64.b64encode(b"\x00\xff").decode(), "encoding": "base64", "key": "k1"}
    sent = service.post(
        f"/api/v1/queues/{queue.topic}/messages/", body | {"headers": {"h": "v"}}, "json"
    )
    assert sent.status_code == 201
    [record] = read_all(queue, queue.topic)
    assert (record.value(), record.key(), record.headers()) == (b"\x00\xff", b"k1", [("h", b"v")])
    entry = AuditEntry.objects.get(action="enqueue")
    assert (entry.user, entry.action, entry.target) == (user, "enqueue", queue.topic)


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"value": "not base64!", "encoding": "base64"}, 400, "value"),
        ({"value": "ñññ=", "encoding": "base64"}, 400, "value"),  # found by schemathesis
        ({"value": "x" * 11}, 413, "value"),
        ({"value": "x", "headers": {"kmq-id": "forged"}}, 400, "headers"),
        ({"value": "x", "encoding": "rot13"}, 400, "encoding"),
        ({}, 400, "value"),
    ],
)
def test_bad_enqueue_requests_get_a_4xx_naming_the_field(
    queue: QueueConfig, operator: APIClient, settings, body: dict, status: int, field: str
) -> None:
    settings.KMQ_MAX_PAYLOAD_BYTES = 10
    response = operator.post(f"/api/v1/queues/{queue.topic}/messages/", body, "json")
    assert response.status_code == status
    assert field in response.json()
    assert read_all(queue, queue.topic) == []


def test_unknown_queue_is_a_404_with_a_json_body(operator: APIClient) -> None:
    response = operator.post("/api/v1/queues/no-such-queue/messages/", {"value": "x"}, "json")
    assert response.status_code == 404
    assert "detail" in response.json()


@pytest.mark.usefixtures("tracker")
def test_in_flight_page_and_actions_by_message_id(queue: QueueConfig, operator: APIClient) -> None:
    topic = queue.topic
    send(queue, 3)
    with QueueClient(queue) as worker:
        acked, retried, extended = sorted(poll_until(worker, 3), key=lambda m: m.id)
        page = wait_for(
            lambda: (
                (r := operator.get(f"/api/v1/queues/{topic}/in-flight/").json())["count"] == 3 and r
            ),
            20,
            "three in flight",
        )
        assert sorted(m["id"] for m in page["results"]) == sorted(
            [acked.id, retried.id, extended.id]
        )
        assert {m["delivery_count"] for m in page["results"]} == {1}

        def act(m: Message, action: str, body: dict | None = None):
            where = {"partition": m.partition, "offset": m.offset}
            return operator.post(
                f"/api/v1/queues/{topic}/messages/{m.id}/{action}", where | (body or {}), "json"
            )

        assert act(acked, "ack").status_code == 200
        assert act(retried, "retry").status_code == 200
        assert act(extended, "extend").status_code == 400  # ms missing
        assert act(extended, "extend", {"ms": 60_000}).json()["action"] == "extend"
        [copy] = poll_until(worker, 1)
        assert (copy.id, copy.delivery_count) == (retried.id, 2)
        in_flight = wait_for(
            lambda: (
                (r := operator.get(f"/api/v1/queues/{topic}/in-flight/").json())["count"] == 2 and r
            ),
            20,
            "the ack and the retry seen",
        )
        assert sorted(m["id"] for m in in_flight["results"]) == sorted([retried.id, extended.id])
        # The retried message's id names its copy too: an action on the copy finds it.
        assert act(copy, "reject", {"reason": "poison"}).status_code == 200
        wait_for(lambda: len(read_all(queue, queue.dlq_topic)) == 1, 20, "the DLQ")
    assert act(acked, "ack").status_code == 404
    url = f"/api/v1/queues/{topic}/messages/{topic}/0/0/ack"
    assert operator.post(url, {"partition": 0, "offset": 0}, "json").status_code == 404
    assert operator.post(url, {}, "json").status_code == 400  # which copy: not said
    entries = AuditEntry.objects.filter(target__startswith=f"{topic}/").order_by("id")
    actions = list(entries.values_list("action", "target", "after"))
    assert actions == [
        ("ack", acked.id, None),
        ("retry", retried.id, None),
        ("extend", extended.id, {"ms": 60_000}),
        ("reject", retried.id, {"reason": "poison"}),
    ]


def test_in_flight_rejects_a_bad_cursor_or_limit(queue: QueueConfig, operator: APIClient) -> None:
    url = f"/api/v1/queues/{queue.topic}/in-flight/"
    assert operator.get(url, {"after": "nonsense"}).status_code == 400
    assert operator.get(url, {"limit": 0}).status_code == 400
    assert operator.get(url, {"limit": "many"}).status_code == 400


def test_a_queue_whose_topics_are_missing_is_a_409_naming_the_fix(
    kafka: EmbeddedBroker, topic: str, operator: APIClient
) -> None:
    cluster = Cluster.objects.create(name="local", bootstrap_servers=kafka.bootstrap_servers)
    Queue.objects.create(cluster=cluster, topic=topic, group_id="g")  # topics never created
    for path in ("in-flight/", "dlq/"):
        response = operator.get(f"/api/v1/queues/{topic}/{path}")
        assert response.status_code == 409
        assert "does not exist" in response.json()["detail"]


@pytest.mark.usefixtures("tracker")
def test_stats_count_depth_in_flight_and_dead_letters(
    queue: QueueConfig, operator: APIClient
) -> None:
    send(queue, 10)
    with QueueClient(queue) as worker:
        taken = poll_until(worker, 10)
        worker.reject(taken[0], "poison")
        worker.ack(taken[1])
        worker.flush()
        producer = QueueProducer(queue)
        for i in range(5):  # not polled: the depth
            producer.send(b"waiting %d" % i)
        producer.flush()

        def settled():
            stats = operator.get(f"/api/v1/queues/{queue.topic}/stats").json()
            return stats["dead_letters"] >= 1 and stats["in_flight"] == 8 and stats

        stats = wait_for(settled, 30, "the reject and the ack counted")
    assert stats["depth"] == 5
    assert stats["dead_letters"] == 1  # records: not the transaction's commit marker
    assert 0 <= stats["oldest_in_flight_ms"] < 60_000
