"""A share queue registered beside a kmq queue: the registry, the API, the pages
and the DLQ, on the real broker and the test database."""

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from kmqadmin.console.models import AuditEntry, Queue
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueClient
from kmqadmin.kmq import headers as h
from tests.kafka_helpers import read_all
from tests.process import wait_for
from tests.queue_helpers import poll_until, send
from tests.users import user_with

pytestmark = pytest.mark.django_db

NO_DEADLINES = "share queues have no per-message deadlines"


def person(role: str) -> User:
    """One user per role, however many clients act as it."""
    return User.objects.filter(username=role).first() or user_with(role)


def client_as(role: str) -> Client:
    client = Client()
    client.force_login(person(role))
    return client


def api_as(role: str) -> APIClient:
    client = APIClient()
    client.force_authenticate(person(role))
    return client


def register(admin: Client, bootstrap_servers: str, topic: str, backend: str, **more) -> Queue:
    """Through the registry's form, as an admin does it (topics created)."""
    if not Queue.objects.exists():
        cluster = {"name": "main", "bootstrap_servers": bootstrap_servers}
        assert admin.post("/registry/cluster/new", cluster).status_code == 302
    cluster_id = str(admin.get("/registry/").context["clusters"][0].pk)
    fields = {
        "cluster": cluster_id,
        "topic": topic,
        "group_id": f"{topic}-workers",
        "backend": backend,
        "partitions": 1,
        "message_timeout_ms": 60_000,  # the most a share group's lock may last
        "max_redeliveries": 3,
        "backoff_multiplier": 2.0,
        "backoff_max_ms": 3_600_000,
        **more,
    }
    answer = admin.post("/registry/queue/new", fields)
    assert answer.status_code == 302, answer.content.decode()
    return Queue.objects.get(topic=topic)


@pytest.fixture
def side_by_side(kafka: EmbeddedBroker, topic: str) -> tuple[Queue, Queue]:
    """A kmq queue and a share queue, registered through the console."""
    admin = client_as("admin")
    kmq = register(admin, kafka.bootstrap_servers, f"{topic}-kmq", "kmq")
    share = register(admin, kafka.bootstrap_servers, f"{topic}-share", "share")
    return kmq, share


def test_both_pages_render_and_the_share_page_says_what_it_has_not(
    side_by_side: tuple[Queue, Queue],
) -> None:
    kmq, share = side_by_side
    viewer = client_as("viewer")
    assert "data-backend>share<" in client_as("admin").get("/registry/").content.decode()
    kmq_page = viewer.get(f"/queues/{kmq.topic}/").content.decode()
    assert "/in-flight/" in kmq_page and NO_DEADLINES not in kmq_page
    share_page = viewer.get(f"/queues/{share.topic}/")
    assert share_page.status_code == 200
    text = share_page.content.decode()
    assert "/in-flight/" not in text  # no live table of deadlines
    assert "data-no-deadlines" in text and "acquisition lock" in text
    assert "no markers" in text and share.markers_topic not in text
    # A fresh broker answers the first offset fetch NOT_COORDINATOR (a 503,
    # try again) while it loads its group coordinator: wait for it to be up.
    kmq_stats = wait_for(
        lambda: (
            (r := api_as("viewer").get(f"/api/v1/queues/{kmq.topic}/stats")).status_code == 200
            and r
        ),
        30,
        "the group coordinator",
    )
    assert kmq_stats.json()["in_flight"] == 0
    stats = api_as("viewer").get(f"/api/v1/queues/{share.topic}/stats")
    assert stats.status_code == 200, stats.content
    assert stats.json()["in_flight"] is None


def test_the_share_queue_has_no_markers_topic_and_its_counts_topic(
    side_by_side: tuple[Queue, Queue],
) -> None:
    kmq, share = side_by_side
    config = share.config()
    topics = AdminClient({"bootstrap.servers": config.bootstrap_servers}).list_topics(timeout=10)
    assert {config.topic, config.dlq_topic, config.counts_topic} <= set(topics.topics)
    assert share.markers_topic not in topics.topics
    assert kmq.markers_topic in topics.topics


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_per_message_actions_and_in_flight_of_a_share_queue_are_refused_saying_why(
    side_by_side: tuple[Queue, Queue],
) -> None:
    _, share = side_by_side
    operator = api_as("operator")
    message = f"{share.topic}/0/0"
    listed = operator.get(f"/api/v1/queues/{share.topic}/in-flight/")
    assert listed.status_code == 409 and NO_DEADLINES in listed.json()["detail"]
    for action, body in [("ack", {}), ("extend", {"ms": 1000}), ("reject", {}), ("retry", {})]:
        answer = operator.post(
            f"/api/v1/queues/{share.topic}/messages/{message}/{action}",
            {"partition": 0, "offset": 0, **body},
            format="json",
        )
        assert answer.status_code == 409, (action, answer.content)
        assert "redrive" in answer.json()["detail"] and "start offset" in answer.json()["detail"]
    form = {"message_id": message, "partition": 0, "offset": 0, "ms": 60000}
    flashed = client_as("operator").post(f"/queues/{share.topic}/act/extend", form)
    assert flashed.status_code == 409 and "share consumer" in flashed.content.decode()
    assert not AuditEntry.objects.filter(action__in=["ack", "extend", "reject", "retry"]).exists()
    purged = client_as("admin").post(f"/queues/{share.topic}/purge")
    assert purged.status_code == 409 and "start offset" in purged.content.decode()
    assert not AuditEntry.objects.filter(action="purge").exists()


def test_the_registry_and_the_api_refuse_a_markers_topic_for_a_share_queue(
    side_by_side: tuple[Queue, Queue],
) -> None:
    kmq, share = side_by_side
    admin = client_as("admin")
    edit = admin.get(f"/registry/queue/{share.pk}").context["form"].initial
    edit = {k: v for k, v in edit.items() if v is not None and k != "id"}
    refused = admin.post(f"/registry/queue/{share.pk}", edit | {"markers_topic_override": "m"})
    assert refused.status_code == 400
    errors = refused.context["form"].errors
    assert "share queue has no markers topic" in errors["markers_topic_override"][0]
    api = api_as("admin")
    body = {"cluster": "main", "topic": "another", "group_id": "g", "backend": "share"}
    answer = api.post("/api/v1/queues/", body | {"markers_topic_override": "m"}, format="json")
    assert answer.status_code == 400
    assert "share queue has no markers topic" in answer.json()["markers_topic_override"][0]
    answer = api.post("/api/v1/queues/", body | {"backend": "sqs"}, format="json")
    assert answer.status_code == 400 and "kmq, share" in answer.json()["backend"][0]
    assert api_as("operator").post("/api/v1/queues/", body, format="json").status_code == 403
    created = api.post("/api/v1/queues/", body, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["backend"] == "share" and created.json()["markers_topic"] is None
    assert AuditEntry.objects.get(action="register queue", target="another").status == "done"
    listed = {q["topic"]: q["backend"] for q in api.get("/api/v1/queues/").json()}
    assert listed == {kmq.topic: "kmq", share.topic: "share", "another": "share"}


def test_the_registry_and_the_api_refuse_a_share_queue_the_broker_cannot_serve(
    side_by_side: tuple[Queue, Queue],
) -> None:
    """The broker's delivery limit (5) leaves room for 3 redeliveries: a 4th
    is refused by its setting's name where the change is made, and nothing
    is saved."""
    _, share = side_by_side
    admin = client_as("admin")
    edit = admin.get(f"/registry/queue/{share.pk}").context["form"].initial
    edit = {k: v for k, v in edit.items() if v is not None and k != "id"}
    refused = admin.post(f"/registry/queue/{share.pk}", edit | {"max_redeliveries": 4})
    assert refused.status_code == 400
    [why] = refused.context["form"].non_field_errors()
    assert "group.share.delivery.count.limit" in why
    answer = api_as("admin").patch(
        f"/api/v1/queues/{share.topic}/", {"max_redeliveries": 4}, format="json"
    )
    assert answer.status_code == 400
    assert "group.share.delivery.count.limit" in answer.json()["non_field_errors"][0]
    assert Queue.objects.get(pk=share.pk).max_redeliveries == 3


def test_switching_backend_is_refused_while_a_kmq_message_is_in_flight(
    side_by_side: tuple[Queue, Queue],
) -> None:
    kmq, _ = side_by_side
    config = kmq.config()
    send(config, 1)
    admin, api = client_as("admin"), api_as("admin")
    with QueueClient(config) as worker:
        [message] = poll_until(worker, 1)  # its start marker written: in flight
        edit = admin.get(f"/registry/queue/{kmq.pk}").context["form"].initial
        edit = {k: v for k, v in edit.items() if v is not None and k != "id"}
        refused = admin.post(f"/registry/queue/{kmq.pk}", edit | {"backend": "share"})
        assert refused.status_code == 400
        [why] = refused.context["form"].errors["backend"]
        assert "1 message(s) in flight" in why
        answer = api.patch(f"/api/v1/queues/{kmq.topic}/", {"backend": "share"}, format="json")
        assert answer.status_code == 409 and "1 message(s) in flight" in answer.json()["detail"]
        admin_site = Client()
        admin_site.force_login(User.objects.create_superuser("root"))
        changed = admin_site.post(
            f"/admin/console/queue/{kmq.pk}/change/", edit | {"backend": "share"}
        )
        assert changed.status_code == 200 and "1 message(s) in flight" in changed.content.decode()
        assert Queue.objects.get(pk=kmq.pk).backend == "kmq"
        refusals = AuditEntry.objects.filter(action="switch backend", target=kmq.topic)
        assert refusals.count() == 3 and {e.status for e in refusals} == {"failed"}
        assert {e.user.username for e in refusals} == {"admin", "root"}
        worker.ack(message)
    switched = api.patch(f"/api/v1/queues/{kmq.topic}/", {"backend": "share"}, format="json")
    assert switched.status_code == 200, switched.content
    assert Queue.objects.get(pk=kmq.pk).backend == "share"
    entry = AuditEntry.objects.filter(action="register queue", target=kmq.topic).latest("pk")
    assert (entry.before["backend"], entry.after["backend"]) == ("kmq", "share")


def test_a_switch_carries_the_groups_position_both_ways(side_by_side: tuple[Queue, Queue]) -> None:
    """Done under one backend is not redelivered under the other: the old
    group's position becomes the new group's (one group id cannot be both
    kinds at once, so the old group goes)."""
    queue, _ = side_by_side
    api = api_as("admin")
    producer = Producer({"bootstrap.servers": queue.cluster.bootstrap_servers})

    def produce(*values: bytes) -> None:
        for value in values:
            producer.produce(queue.topic, value, partition=0)
        producer.flush(10)

    def switch(backend: str, status: int = 200) -> str:
        answer = api.patch(f"/api/v1/queues/{queue.topic}/", {"backend": backend}, format="json")
        assert answer.status_code == status, answer.content
        queue.refresh_from_db()
        return answer.content.decode()

    produce(b"a", b"b")
    with QueueClient(queue.config()) as worker:
        worker.ack_all(poll_until(worker, 2))
    switch("share")
    produce(b"c")
    with QueueClient(queue.config()) as worker:
        got = poll_until(worker, 1)
        assert [m.value for m in got] == [b"c"]
        worker.ack_all(got)
        worker.flush()
        assert "consumer(s) connected" in switch("kmq", 409)
    switch("kmq")
    produce(b"d")
    with QueueClient(queue.config()) as worker:
        got = poll_until(worker, 1)
        assert worker.poll(10, 1.0) == []
        assert [m.value for m in got] == [b"d"]


def write_letters(queue: Queue) -> tuple[int, int]:
    """A message of the share queue dead-lettered twice from one record (a
    crash between the DLQ write and the ACCEPT), then, redriven and failed
    again, a third time from its new copy. Returns the record's and the new
    copy's timestamps."""
    config = queue.config()
    producer = Producer({"bootstrap.servers": config.bootstrap_servers})
    producer.produce(config.topic, b"order", key=b"k", partition=0)
    producer.flush(10)
    [record] = read_all(config, config.topic, partitions=1)
    first_at = record.timestamp()[1]
    message_id = h.message_id(config.topic, 0, record.offset()).encode()
    later_at = first_at + 5_000
    # The twin: the record, redelivered after the crash, went over its limit.
    for reason, at in [
        (b"rejected", first_at),
        (b"max-redeliveries", first_at),
        (b"rejected", later_at),
    ]:
        headers = [(h.MESSAGE_ID, message_id), (h.DLQ_REASON, reason)]
        producer.produce(config.dlq_topic, b"order", b"k", 0, headers=headers, timestamp=at)
    producer.flush(10)
    return first_at, later_at


@pytest.mark.usefixtures("eager_tasks")
def test_twin_letters_are_marked_and_redriven_once(side_by_side: tuple[Queue, Queue]) -> None:
    _, share = side_by_side
    write_letters(share)
    operator = api_as("operator")
    page = operator.get(f"/api/v1/queues/{share.topic}/dlq/").json()["results"]
    assert [r["duplicate_of"] for r in page] == [None, 0, None]
    browsed = client_as("viewer").get(f"/queues/{share.topic}/dlq/").content.decode()
    assert browsed.count("duplicate of 0/0") == 1
    started = operator.post(f"/api/v1/queues/{share.topic}/dlq/redrive")
    assert started.status_code == 202
    progress = operator.get(started.json()["status_url"]).json()["progress"]
    assert (progress["redriven"], progress["duplicates"]) == (2, 1)
    back = read_all(share.config(), share.topic, partitions=1)
    assert len(back) == 3  # the record, and two redriven copies: not three


def test_the_lifecycle_of_a_share_message_shows_copies_and_letters_and_no_markers(
    side_by_side: tuple[Queue, Queue],
) -> None:
    _, share = side_by_side
    write_letters(share)
    page = client_as("viewer").get(f"/queues/{share.topic}/messages/{share.topic}/0/0")
    assert page.status_code == 200, page.content.decode()
    text = page.content.decode()
    assert "No markers" in text and NO_DEADLINES in text
    assert text.count('data-event="dead-lettered"') == 3
    assert "duplicate of letter 0/0" in text
    assert text.count("Its letter in the DLQ") == 3
    assert 'data-event="started"' not in text


def test_a_kmq_queue_in_flight_view_catches_up_before_a_switch(
    side_by_side: tuple[Queue, Queue],
) -> None:
    """The switch check reads the markers to their end, not one refresh's worth."""
    kmq, _ = side_by_side
    config = kmq.config()
    send(config, 3)
    with QueueClient(config) as worker:
        poll_until(worker, 3)
        answer = api_as("admin").patch(
            f"/api/v1/queues/{kmq.topic}/", {"backend": "share"}, format="json"
        )
        assert answer.status_code == 409 and "3 message(s) in flight" in answer.json()["detail"]


def test_a_share_queues_stats_come_from_its_group_and_its_counts(
    side_by_side: tuple[Queue, Queue],
) -> None:
    """Depth is the share group's lag; redeliveries and moves to the DLQ per
    minute are what the clients counted (no tracker counts them)."""
    _, share = side_by_side
    config = share.config()
    send(config, 3)
    api = api_as("viewer")

    def stats() -> dict:
        answer = api.get(f"/api/v1/queues/{share.topic}/stats")
        assert answer.status_code == 200, answer.content
        return answer.json()

    assert stats()["depth"] == 3 and stats()["in_flight"] is None
    with QueueClient(config) as worker:
        got = sorted(poll_until(worker, 3), key=lambda m: m.offset)
        worker.reject(got[0], reason="bad")
        worker.ack_all(got[1:])
    wait_for(lambda: stats()["depth"] == 0, 30, "the group's lag to reach 0")
    assert stats()["dead_lettered_per_min"] == 0.2  # one in the last five minutes
