"""Kafka away: every page, API call and live view says so within seconds,
with Retry-After, and the live views recover by themselves."""

import os
import signal
import time

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.test import Client
from rest_framework.test import APIClient

from kmqadmin.console.models import AuditEntry, Cluster, Queue
from kmqadmin.console.services.clusters import availability
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from tests.console.test_live import connect, receive_until
from tests.kafka_helpers import read_all
from tests.process import wait_for
from tests.users import user_with

# The bound the issue sets for any answer while Kafka is away; the probe's
# own is availability.PROBE_S.
ANSWERS_WITHIN_S = 3.0


@pytest.fixture
def away(stalled: str, topic: str) -> Queue:
    cluster = Cluster.objects.create(name="stalled", bootstrap_servers=stalled)
    return Queue.objects.create(cluster=cluster, topic=topic, group_id="g")


def timed(get) -> tuple[object, float]:
    started = time.monotonic()
    response = get()
    return response, time.monotonic() - started


@pytest.mark.django_db
def test_pages_and_api_calls_on_a_stalled_cluster_say_so_in_time(away: Queue) -> None:
    """503 with Retry-After where the whole answer is Kafka's; the groups page,
    which lists two kinds of group, says it of each kind in place."""
    operator = user_with("operator")
    console, api = Client(), APIClient()
    console.force_login(operator)
    api.force_authenticate(operator)
    unavailable = {
        "dlq page": lambda: console.get(f"/queues/{away.topic}/dlq/"),
        "topics page": lambda: console.get("/clusters/stalled/topics/"),
        "api stats": lambda: api.get(f"/api/v1/queues/{away.topic}/stats"),
        "api in flight": lambda: api.get(f"/api/v1/queues/{away.topic}/in-flight/"),
        "api enqueue": lambda: api.post(
            f"/api/v1/queues/{away.topic}/messages/", {"value": "x"}, format="json"
        ),
    }
    for what, call in unavailable.items():
        response, took = timed(call)
        assert response.status_code == 503, (what, response.content[:300])
        assert response["Retry-After"] == str(availability.RETRY_AFTER_S), what
        assert b"Disconnected from Kafka at" in response.content, (what, response.content[:300])
        assert took < ANSWERS_WITHIN_S, (what, took)
    groups, took = timed(lambda: console.get("/clusters/stalled/groups/"))
    assert groups.content.decode().count("Disconnected from Kafka at") == 2  # consumer, share
    assert took < ANSWERS_WITHIN_S


@pytest.mark.django_db
def test_an_admin_s_queue_page_on_a_stalled_cluster_offers_no_topics_to_create(
    away: Queue,
) -> None:
    """Whether topics are missing is unknown while the cluster does not
    answer: the page says nothing of it rather than offer to create them."""
    admin = Client()
    admin.force_login(user_with("admin"))
    page, took = timed(lambda: admin.get(f"/queues/{away.topic}/"))
    assert page.status_code == 200
    assert "Create missing topics" not in page.content.decode()
    assert took < ANSWERS_WITHIN_S


@pytest.mark.django_db
def test_a_secured_cluster_that_does_not_answer_is_a_503_in_time(
    stalled: str, topic: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its login check comes first, and is bounded as the probe is."""
    monkeypatch.setenv("STALLED_PASSWORD", "secret")
    cluster = Cluster.objects.create(
        name="stalled-sasl",
        bootstrap_servers=stalled,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-512",
        sasl_username="app",
        sasl_password="env:STALLED_PASSWORD",
    )
    queue = Queue.objects.create(cluster=cluster, topic=topic, group_id="g")
    api = APIClient()
    api.force_authenticate(user_with("viewer"))
    response, took = timed(lambda: api.get(f"/api/v1/queues/{queue.topic}/stats"))
    assert response.status_code == 503, response.content[:300]
    assert response["Retry-After"] == str(availability.RETRY_AFTER_S)
    assert stalled in response.json()["detail"]
    assert took < ANSWERS_WITHIN_S


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_dashboard_says_since_when_kafka_is_away_and_recovers(
    own_broker: EmbeddedBroker, topic: str
) -> None:
    cluster = Cluster.objects.create(name="own", bootstrap_servers=own_broker.bootstrap_servers)
    queue = Queue.objects.create(cluster=cluster, topic=topic, group_id="g")
    queue.config().ensure_topics(partitions=3)
    assert own_broker.process is not None
    pid = own_broker.process.pid

    async def scenario() -> None:
        viewer = await database_sync_to_async(user_with)("viewer")
        socket = connect("/ws/dashboard/", viewer)
        assert (await socket.connect())[0]
        try:
            await receive_until(socket, 'data-gauge="depth">0<', 30)
            os.kill(pid, signal.SIGSTOP)
            try:
                frame = await receive_until(socket, "Disconnected from Kafka at", 20)
                assert own_broker.bootstrap_servers in frame
            finally:
                os.kill(pid, signal.SIGCONT)
            frame = await receive_until(socket, 'data-gauge="depth">0<', 60)
            assert "Disconnected" not in frame
        finally:
            await socket.disconnect()

    async_to_sync(scenario)()


@pytest.mark.django_db
def test_a_send_kafka_does_not_report_on_is_504_outcome_unknown_then_audited_as_it_was(
    own_broker: EmbeddedBroker, topic: str
) -> None:
    """The broker stalls under a send: 504 'outcome unknown', an audit entry
    that says so, and once the broker is back and the producer is used again,
    the entry says where the record went; the record is there once."""
    cluster = Cluster.objects.create(name="own", bootstrap_servers=own_broker.bootstrap_servers)
    queue = Queue.objects.create(cluster=cluster, topic=topic, group_id="g")
    queue.config().ensure_topics(partitions=1)
    api = APIClient()
    api.force_authenticate(user_with("operator"))
    url = f"/api/v1/queues/{topic}/messages/"
    assert api.post(url, {"value": "first"}, format="json").status_code == 201
    assert own_broker.process is not None
    pid = own_broker.process.pid
    keyed = {"format": "json", "HTTP_IDEMPOTENCY_KEY": "stalled-1"}
    os.kill(pid, signal.SIGSTOP)  # right after a send: the cluster is known to answer
    try:
        stalled = api.post(url, {"value": "stalled"}, **keyed)
        retried = api.post(url, {"value": "stalled"}, **keyed)  # the client's retry
    finally:
        os.kill(pid, signal.SIGCONT)
    assert stalled.status_code == 504, stalled.content
    assert stalled.json()["detail"].startswith("outcome unknown:")
    assert retried.status_code == 409 and retried["Retry-After"], retried.content
    entry = AuditEntry.objects.filter(action="enqueue").latest("pk")
    assert entry.status == AuditEntry.Status.UNKNOWN, (entry.status, entry.error)

    def sent_again() -> bool:  # the next send polls the producer: the late report comes
        return api.post(url, {"value": "third"}, format="json").status_code == 201

    wait_for(sent_again, 60, "a send once the broker is back")
    entry.refresh_from_db()
    assert entry.status == AuditEntry.Status.DONE, (entry.status, entry.error)
    replayed = api.post(url, {"value": "stalled"}, **keyed)
    assert replayed.status_code == 201 and replayed["Idempotent-Replayed"] == "true"
    values = [r.value() for r in read_all(queue.config(), topic, partitions=1)]
    assert values.count(b"stalled") == 1
    assert entry.after["offset"] == values.index(b"stalled") == replayed.json()["offset"]
