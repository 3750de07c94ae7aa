"""Console pages and actions: roles, CSRF, audit, against the real broker."""

import re
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils.dateparse import parse_datetime

from kmqadmin.console.models import AuditEntry, Cluster, Queue, ScheduleTopic
from kmqadmin.console.services.clusters import clients
from kmqadmin.console.services.schedules import write_schedule
from kmqadmin.kmq import QueueClient, QueueConfig, QueueGauges
from kmqadmin.kmq import headers as h
from tests.console.conftest import client_as, register_schedules
from tests.kafka_helpers import read_all
from tests.process import wait_for
from tests.queue_helpers import poll_until, send

pytestmark = pytest.mark.django_db


def test_anonymous_is_sent_to_log_in_and_a_viewer_cannot_act(registered: Queue) -> None:
    topic = registered.topic
    for page in ("/", f"/queues/{topic}/", f"/queues/{topic}/dlq/", "/audit/"):
        answer = client_as(None).get(page)
        assert answer.status_code == 302 and answer.url.startswith("/accounts/login/"), page
    viewer = client_as("viewer")
    for page in ("/", f"/queues/{topic}/", f"/queues/{topic}/dlq/", "/audit/"):
        assert viewer.get(page).status_code == 200, page
    refused = viewer.post(f"/queues/{topic}/act/ack", {"message_id": f"{topic}/0/0"})
    assert refused.status_code == 403
    assert viewer.get("/registry/").status_code == 403
    assert client_as("operator").get("/registry/").status_code == 403
    admin = client_as("admin")
    assert admin.get("/registry/").status_code == 200
    assert b"Purge" in admin.get(f"/queues/{topic}/").content
    assert b"Purge" not in viewer.get(f"/queues/{topic}/").content
    assert viewer.post(f"/queues/{topic}/topics").status_code == 403
    created = admin.post(f"/queues/{topic}/topics", follow=True)
    assert b"nothing, all exist" in created.content
    assert list(AuditEntry.objects.filter(target=topic).values_list("action", flat=True)) == [
        "create topics"
    ]


def test_forms_need_the_csrf_token(registered: Queue) -> None:
    operator = client_as("operator", enforce_csrf_checks=True)
    url = f"/queues/{registered.topic}/act/ack"
    form = {"message_id": f"{registered.topic}/0/0", "partition": 0, "offset": 0}
    assert operator.post(url, form).status_code == 403
    operator.get(f"/queues/{registered.topic}/")  # sets the csrftoken cookie
    token = operator.cookies["csrftoken"].value
    answer = operator.post(url, form, headers={"X-CSRFToken": token})
    assert answer.status_code == 404  # past CSRF: the message is simply not in flight
    assert b"not in flight" in answer.content


def test_operator_retries_and_rejects_then_redrives_from_the_dlq(
    queue: QueueConfig, registered: Queue, tracker
) -> None:
    operator = client_as("operator")
    topic = queue.topic
    send(queue, 2)
    with QueueClient(queue) as worker:
        retried, rejected = sorted(poll_until(worker, 2), key=lambda m: m.id)

        def act(message, action: str, **extra):
            data = {"message_id": message.id, **extra}
            data |= {"partition": message.partition, "offset": message.offset}
            return operator.post(f"/queues/{topic}/act/{action}", data)

        wait_for(lambda: act(retried, "retry").status_code == 200, 20, "the retry taken")
        again = poll_until(worker, 1)
        assert [(m.id, m.delivery_count) for m in again] == [(retried.id, 2)]
        assert act(rejected, "extend").status_code == 400  # ms missing
        assert act(rejected, "reject", reason="bad data").status_code == 200
        wait_for(lambda: read_all(queue, queue.dlq_topic), 20, "the letter")
        letter = read_all(queue, queue.dlq_topic)[0]
        dlq = {"partition": letter.partition(), "reason": "rejected"}
        page = operator.get(f"/queues/{topic}/dlq/", dlq)
        assert rejected.id.encode() in page.content and b"bad data" in page.content
        row = page.content.decode().split("data-letter=")[1]
        dead_at = h.decode_ms(h.find_in(letter, h.DLQ_AT))
        assert dead_at is not None and dead_at >= letter.timestamp()[1]
        assert f"{datetime.fromtimestamp(dead_at / 1000, UTC):%Y-%m-%d %H:%M:%S}" in row
        assert "data-redriven" not in row
        assert (
            operator.get(f"/queues/{topic}/dlq/", {"key": "nope"}).content.count(b"data-letter")
            == 0
        )
        redriven = operator.post(
            f"/queues/{topic}/dlq/{letter.partition()}/{letter.offset()}/redrive"
        )
        assert redriven.status_code == 200
        [back] = poll_until(worker, 1)
        assert (back.id, back.delivery_count) == (rejected.id, 1)
        assert h.find(back.headers, h.DLQ_AT) is None  # it starts over
        marked = operator.get(f"/queues/{topic}/dlq/", dlq).content.decode()
        assert re.search(rf"redriven [0-9-]+ [0-9:]+ UTC by operator to {topic}<", marked)

        story = operator.get(f"/queues/{topic}/messages/{rejected.id}")
        assert story.status_code == 200
        events = story.content.decode()
        for kind in ("produced", "started", "reject asked", "dead-lettered"):
            assert f'data-event="{kind}"' in events, kind
    assert operator.get(f"/queues/{topic}/messages/{topic}/0/999999").status_code == 404
    user = User.objects.get(username="operator")
    assert list(
        AuditEntry.objects.filter(user=user)
        .exclude(action="login")
        .order_by("id")
        .values_list("action", "target")
    ) == [
        ("retry", retried.id),
        ("reject", rejected.id),
        ("redrive", rejected.id),
    ]
    audit = operator.get("/audit/", {"action": "reject"}).content.decode()
    assert rejected.id in audit and "bad data" in audit and "redrive" not in audit


def test_admin_registers_a_queue_and_its_topics_are_created(kafka, topic: str) -> None:
    admin = client_as("admin")
    made = admin.post(
        "/registry/cluster/new", {"name": "main", "bootstrap_servers": kafka.bootstrap_servers}
    )
    assert made.status_code == 302
    cluster_id = str(admin.get("/registry/").context["clusters"][0].pk)
    bad = admin.post("/registry/queue/new", {"cluster": cluster_id, "topic": "no spaces"})
    assert bad.status_code == 400 and b"topic" in bad.content
    fields = {
        "cluster": cluster_id,
        "topic": topic,
        "group_id": f"{topic}-workers",
        "partitions": 2,
        "message_timeout_ms": 5000,
        "max_redeliveries": 2,
        "backoff_multiplier": 2.0,
        "backoff_max_ms": 60_000,
    }
    assert admin.post("/registry/queue/new", fields).status_code == 302
    queue = Queue.objects.get(topic=topic)
    assert queue.config().ensure_topics(2) == []  # all three exist already
    entry = AuditEntry.objects.get(action="register queue")
    assert set(entry.after["topics created"]) == {topic, queue.markers_topic, queue.dlq_topic}


def test_schedules_are_created_listed_edited_and_cancelled(kafka, topic: str) -> None:
    register_schedules(kafka.bootstrap_servers, topic)
    assert ScheduleTopic.objects.filter(topic=topic).exists()
    operator = client_as("operator")
    new = {"id": "invoice-7", "at": "2999-01-01 10:00:00", "target_topic": "out", "value": "hi"}
    assert operator.post(f"/schedules/{topic}/new", new).status_code == 302
    listed = wait_for(
        lambda: b"invoice-7" in (r := operator.get(f"/schedules/{topic}/")).content and r,
        20,
        "the schedule listed",
    )
    assert b"2999-01-01 10:00:00" in listed.content
    form = operator.get(f"/schedules/{topic}/invoice-7/edit").content.decode()
    assert "hi</textarea>" in form and 'value="out"' in form  # the live version, filled in
    edited = {"at": "2998-06-01 08:00:00", "target_topic": "out", "value": "hi"}
    assert operator.post(f"/schedules/{topic}/invoice-7/edit", edited).status_code == 302
    wait_for(
        lambda: b"2998-06-01 08:00:00" in operator.get(f"/schedules/{topic}/").content,
        20,
        "the new version listed",
    )
    assert operator.post(f"/schedules/{topic}/invoice-7/cancel").status_code == 200
    wait_for(
        lambda: b"invoice-7" not in operator.get(f"/schedules/{topic}/").content,
        20,
        "the schedule gone",
    )
    assert operator.post(f"/schedules/{topic}/invoice-7/cancel").status_code == 404
    gone = operator.post(f"/schedules/{topic}/invoice-7/fire")
    assert gone.status_code == 404 and b"no live schedule" in gone.content
    assert list(
        AuditEntry.objects.filter(target=f"{topic}/invoice-7").order_by("id").values_list("action")
    ) == [("schedule",), ("edit schedule",), ("cancel schedule",)]


def test_bad_form_input_is_a_4xx_with_the_reason(registered: Queue) -> None:
    operator = client_as("operator")
    topic = registered.topic
    assert operator.post(f"/queues/{topic}/act/explode", {"message_id": "x"}).status_code == 404
    no_id = operator.post(f"/queues/{topic}/act/ack", {})
    assert no_id.status_code == 400 and b"message_id" in no_id.content
    assert operator.get("/queues/no-such-queue/").status_code == 404
    bad = operator.get(f"/queues/{topic}/dlq/", {"since": "yesterday", "header": "x"})
    assert bad.status_code == 200
    assert b"ISO 8601" in bad.content and b"NAME=VALUE" in bad.content
    replay = operator.post(f"/queues/{topic}/replay", {})
    assert replay.status_code == 400 and b"either" in replay.content


@pytest.mark.usefixtures("eager_tasks")
def test_bulk_redrive_shows_a_progress_bar_to_the_end(
    queue: QueueConfig, registered: Queue, tracker
) -> None:
    operator = client_as("operator")
    send(queue, 2, partition=0)
    with QueueClient(queue) as worker:
        for message in poll_until(worker, 2):
            worker.reject(message, "bad batch")
        wait_for(lambda: len(read_all(queue, queue.dlq_topic)) == 2, 20, "two letters")
        started = operator.post(f"/queues/{queue.topic}/dlq/redrive", {"reason": "rejected"})
        assert started.status_code == 200
        bar = progress_bar(operator, started)
        assert "SUCCESS" in bar and 'value="100"' in bar and "redriven 2" in bar
        assert "hx-trigger" not in bar  # done: the bar stops polling
        back = poll_until(worker, 2)
        assert len(back) == 2
        # Dead again after the job: in the DLQ past what the job went through.
        worker.reject(back[0], "bad again")
        wait_for(lambda: len(read_all(queue, queue.dlq_topic)) == 3, 20, "the third letter")
    page = operator.get(f"/queues/{queue.topic}/dlq/", {"partition": 0}).content.decode()
    rows = page.split("data-letter=")[1:]
    marked = [
        bool(re.search(rf"redriven [0-9-]+ [0-9:]+ UTC by operator to {queue.topic}<", r))
        for r in rows
    ]
    assert sorted(marked) == [False, True, True], rows
    assert "bad again" in next(r for r, m in zip(rows, marked, strict=True) if not m)


@pytest.mark.usefixtures("eager_tasks")
def test_replay_and_purge_jobs_from_the_queue_page(queue: QueueConfig, registered: Queue) -> None:
    send(queue, 3, partition=0)
    operator = client_as("operator")
    assert operator.post(f"/queues/{queue.topic}/purge").status_code == 403  # admins only
    replayed = operator.post(
        f"/queues/{queue.topic}/replay", {"partition": 0, "from_offset": 0, "to_offset": 2}
    )
    assert "SUCCESS" in progress_bar(operator, replayed)
    admin = client_as("admin")
    assert "SUCCESS" in progress_bar(admin, admin.post(f"/queues/{queue.topic}/purge"))
    assert QueueGauges(queue).depth() == 0
    entries = dict(AuditEntry.objects.values_list("action", "after"))
    assert entries["replay"] == {"replayed": 2}
    assert entries["purge"]["acked"] == 0


def progress_bar(client: Client, started) -> str:
    """The bar a started job's fragment polls, as it stands now."""
    assert started.status_code == 200
    task_id = started.content.decode().split('id="job-')[1].split('"')[0]
    return client.get(f"/tasks/{task_id}").content.decode()


def test_a_queue_whose_topics_are_missing_says_so_until_an_admin_creates_them(
    kafka, topic: str
) -> None:
    cluster = Cluster.objects.create(name="local", bootstrap_servers=kafka.bootstrap_servers)
    Queue.objects.create(cluster=cluster, topic=topic, group_id="g")  # topics never created
    admin = client_as("admin")
    missing = admin.get(f"/queues/{topic}/dlq/")
    assert missing.status_code == 409 and b"does not exist" in missing.content
    assert admin.get(f"/schedules/{topic}/nope/edit").status_code == 404  # no such topic
    offered = admin.get(f"/queues/{topic}/").content.decode()
    assert "Create missing topics" in offered
    assert f"Missing from the cluster: {topic}, {topic}__undelivered, {topic}__markers" in offered
    admin.post(f"/queues/{topic}/topics")
    assert admin.get(f"/queues/{topic}/dlq/").status_code == 200
    assert "Create missing topics" not in admin.get(f"/queues/{topic}/").content.decode()


def test_editing_a_schedule_keeps_its_pass_through_headers(kafka, topic: str) -> None:
    cluster = Cluster.objects.create(name="local", bootstrap_servers=kafka.bootstrap_servers)
    schedules = ScheduleTopic.objects.create(cluster=cluster, topic=topic, group_id="s")
    schedules.config().ensure_topics(partitions=1)
    operator = client_as("operator")
    first = {"at": parse_datetime("2999-01-01T00:00:00Z"), "target_topic": "out"}
    first |= {"payload": b"hi", "key": "k", "headers": {"trace": "abc"}}
    write_schedule(User.objects.get(), schedules, b"s-1", first, edit=False)
    v1 = wait_for(lambda: clients.upcoming(schedules.config()).get(b"s-1"), 20, "version 1")
    edited = {"at": "2998-01-01 00:00:00", "target_topic": "out", "key": "k", "value": "hi"}
    assert operator.post(f"/schedules/{topic}/s-1/edit", edited).status_code == 302

    def second_version():
        live = clients.upcoming(schedules.config()).get(b"s-1")
        return live if live is not None and live.due_ms < v1.due_ms else None

    record = clients.upcoming(schedules.config()).record(wait_for(second_version, 20, "v2"))
    assert ("trace", b"abc") in record.headers()
    assert record.value() == b"hi"


def test_editing_or_deleting_a_queue_closes_its_kept_clients(registered: Queue) -> None:
    kept = clients.in_flight(registered.config())
    assert clients.in_flight(registered.config()) is kept  # kept between requests
    producer = clients.producer(registered.config())

    registered.message_timeout_ms = 60_000
    registered.save()
    with pytest.raises(RuntimeError):  # closed: confluent-kafka refuses a closed consumer
        kept.refresh()
    with pytest.raises(RuntimeError, match="closed"):  # and a closed producer
        producer.send(b"late")
    fresh = clients.in_flight(registered.config())
    assert fresh is not kept and fresh.config.message_timeout_ms == 60_000

    registered.delete()
    with pytest.raises(RuntimeError):
        fresh.refresh()


def test_saving_a_queue_closes_the_clients_of_its_backoff_schedules(registered: Queue) -> None:
    registered.backoff_initial_ms = 1000
    registered.save()
    registered.config().ensure_topics(partitions=1)
    kept = clients.upcoming(registered.config().scheduler_config())
    registered.backoff_max_ms = 2000
    registered.save()
    with pytest.raises(RuntimeError):  # closed: confluent-kafka refuses a closed consumer
        kept.refresh()
