"""The DLQ API against the real broker, a real tracker and the test database."""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from kmqadmin.console.models import AuditEntry
from kmqadmin.kmq import QueueClient, QueueConfig, QueueProducer
from kmqadmin.kmq import headers as h
from tests.api.conftest import client_as
from tests.kafka_helpers import read_all
from tests.process import wait_for
from tests.queue_helpers import poll_until
from tests.users import user_with

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("tracker")]


def dead_letter_six(queue: QueueConfig) -> None:
    """Six letters on DLQ partition 0: k0..k5, every other one tagged."""
    producer = QueueProducer(queue)
    for i in range(6):
        tag = {"team": b"red" if i % 2 else b"blue"}
        producer.send(value=b"order %d" % i, key=b"k%d" % i, headers=tag, partition=0)
    producer.flush()
    with QueueClient(queue) as worker:
        for m in poll_until(worker, 6):
            worker.reject(m, reason=f"bad {m.key.decode()}")
    wait_for(lambda: len(read_all(queue, queue.dlq_topic)) == 6, 30, "six letters")


def test_browse_filter_and_page_by_offset(queue: QueueConfig, operator: APIClient) -> None:
    dead_letter_six(queue)
    url = f"/api/v1/queues/{queue.topic}/dlq/"
    everything = operator.get(url).json()
    assert [r["key"] for r in everything["results"]] == [f"k{i}" for i in range(6)]
    first = everything["results"][0]
    assert (first["reason"], first["value"], first["headers"]["team"]) == (
        "rejected",
        "order 0",
        "blue",
    )
    assert first["id"] == f"{queue.topic}/0/0"
    assert everything["next"] is None
    red = operator.get(url, {"header": "team=red"}).json()["results"]
    assert [r["key"] for r in red] == ["k1", "k3", "k5"]
    assert [r["key"] for r in operator.get(url, {"contains": "order 4"}).json()["results"]] == [
        "k4"
    ]
    assert operator.get(url, {"reason": "expired"}).json()["results"] == []
    page = operator.get(url, {"limit": 4}).json()
    rest = operator.get(url, {"limit": 4, "from": page["next"]}).json()
    assert [r["key"] for r in page["results"] + rest["results"]] == [f"k{i}" for i in range(6)]
    assert operator.get(url, {"since": "2999-01-01T00:00:00Z"}).json()["results"] == []
    assert operator.get(url, {"until": "2000-01-01T00:00:00Z"}).json()["results"] == []
    assert len(operator.get(url, {"until": "2999-01-01T00:00:00Z"}).json()["results"]) == 6


def test_redrive_sends_the_letter_back_as_a_first_delivery(
    queue: QueueConfig,
    operator: APIClient,
) -> None:
    dead_letter_six(queue)
    letter = operator.get(f"/api/v1/queues/{queue.topic}/dlq/", {"key": "k2"}).json()["results"][0]
    done = operator.post(f"/api/v1/queues/{queue.topic}/dlq/0/{letter['offset']}/redrive")
    assert done.status_code == 200
    with QueueClient(queue) as worker:
        [again] = poll_until(worker, 1)
        assert (again.key, again.value, again.delivery_count) == (b"k2", b"order 2", 1)
        assert h.find(again.headers, h.DLQ_REASON) is None
        assert again.id == letter["id"]  # the same message, one history
        worker.ack(again)
    entry = AuditEntry.objects.get(action="redrive")
    assert entry.target == letter["id"]


def test_bad_dlq_requests_get_a_4xx(queue: QueueConfig, operator: APIClient) -> None:
    url = f"/api/v1/queues/{queue.topic}/dlq/"
    for params, field in [
        ({"partition": 99}, "partition"),
        ({"partition": "zero"}, "partition"),
        ({"since": "yesterday"}, "since"),
        ({"header": "no-equals"}, "header"),
    ]:
        response = operator.get(url, params)
        assert response.status_code == 400 and field in response.json(), params
    assert operator.post(f"{url}0/12345/redrive").status_code == 404
    assert operator.post(f"{url}999/0/redrive").status_code == 404
    viewer = operator.__class__()
    assert viewer.post(f"{url}0/0/redrive").status_code == 401


@pytest.mark.usefixtures("eager_tasks")
def test_bulk_redrive_of_a_filter_reports_progress_and_audits(
    queue: QueueConfig,
    operator: APIClient,
) -> None:
    dead_letter_six(queue)
    started = operator.post(f"/api/v1/queues/{queue.topic}/dlq/redrive?header=team%3Dred")
    assert started.status_code == 202
    status = operator.get(started.json()["status_url"]).json()
    assert status == {
        "state": "SUCCESS",
        "progress": {"redriven": 3, "duplicates": 0, "fraction": 1.0},
    }
    with QueueClient(queue) as worker:
        back = poll_until(worker, 3)
        assert sorted(m.key for m in back) == [b"k1", b"k3", b"k5"]
        assert {m.delivery_count for m in back} == {1}
        for m in back:
            worker.ack(m)
    entry = AuditEntry.objects.get(action="bulk redrive")
    red = [m.offset() for m in read_all(queue, queue.dlq_topic) if h.find_in(m, "team") == b"red"]
    # What the DLQ page marks as redriven: the filter's letters in these offsets.
    assert entry.after == {"redriven": 3, "duplicates": 0, "offsets": [0, max(red) + 1]}
    assert entry.before["filter"]["header"] == ["team", "red"]
    assert client_as("viewer").post(f"/api/v1/queues/{queue.topic}/dlq/redrive").status_code == 403


@pytest.mark.usefixtures("eager_tasks")
def test_a_jobs_progress_is_for_its_starter_and_admins_alone(
    queue: QueueConfig, operator: APIClient
) -> None:
    started = operator.post(f"/api/v1/queues/{queue.topic}/dlq/redrive?partition=0")
    status_url, task_id = started.json()["status_url"], started.json()["task"]
    others = {"admin": 200, "viewer": 403, "operator": 403}
    for role, expected in others.items():
        api, console = APIClient(), Client()
        user = user_with(role, f"other-{role}")
        api.force_authenticate(user)
        console.force_login(user)
        refused = api.get(status_url)
        assert refused.status_code == expected, role
        assert expected == 200 or "starter" in refused.json()["detail"]
        assert console.get(f"/tasks/{task_id}").status_code == expected, role  # the progress bar
    assert operator.get(status_url).status_code == 200
    assert operator.get("/api/v1/tasks/no-such-job").status_code == 404
    starter = Client()
    starter.force_login(User.objects.get(username="operator"))
    assert starter.get(f"/tasks/{task_id}").status_code == 200
    assert starter.get("/tasks/no-such-job").status_code == 404
