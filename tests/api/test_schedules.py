"""The schedules API against the real broker, a real scheduler and the test database."""

import json
from datetime import UTC, datetime, timedelta

import pytest
from rest_framework.test import APIClient

from kmqadmin.console.models import AuditEntry, Cluster, ScheduleTopic
from kmqadmin.scheduler import SchedulerConfig
from tests.api.conftest import client_as
from tests.process import wait_for
from tests.schedule_helpers import fired, fired_ids

pytestmark = pytest.mark.django_db


@pytest.fixture
def registered(schedules: SchedulerConfig) -> str:
    cluster = Cluster.objects.create(name="local", bootstrap_servers=schedules.bootstrap_servers)
    ScheduleTopic.objects.create(
        cluster=cluster, topic=schedules.topic, group_id=schedules.group_id
    )
    return f"/api/v1/schedules/{schedules.topic}/"


def soon(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()


def listed(operator: APIClient, url: str, count: int) -> list[dict]:
    def page():
        body = operator.get(url).json()
        return body["complete"] and body["count"] == count and body["results"]

    return wait_for(page, 20, f"{count} live schedules") if count else []


@pytest.mark.usefixtures("scheduler")
def test_create_list_edit_cancel_and_fire_now(
    registered: str, schedules: SchedulerConfig, target: str, operator: APIClient
) -> None:
    def create(schedule_id: str, at: str, value: str = "v") -> int:
        body = {"id": schedule_id, "at": at, "target_topic": target, "value": value, "key": "k"}
        return operator.post(registered, body, "json").status_code

    assert create("later", soon(3600)) == 201
    assert create("cancelled", soon(3600)) == 201
    assert create("retry/with/slashes", soon(3600)) == 201
    assert create("edited", soon(3600)) == 201
    page = listed(operator, registered, 4)
    assert [s["id"] for s in page[:1]] == ["later"]  # soonest first
    assert operator.delete(f"{registered}cancelled").status_code == 204
    edit = {"at": soon(1), "target_topic": target, "value": "new"}
    assert operator.put(f"{registered}edited", edit, "json").status_code == 200
    assert operator.post(f"{registered}retry/with/slashes/fire").status_code == 200
    wait_for(lambda: len(fired(schedules, target)) == 2, 30, "the edit and fire-now to fire")
    assert fired_ids(schedules, target) == {"edited": 1, "retry/with/slashes": 1}
    assert {r.value() for r in fired(schedules, target)} == {b"new", b"v"}
    assert [s["id"] for s in listed(operator, registered, 1)] == ["later"]
    assert operator.delete(f"{registered}cancelled").status_code == 404
    entries = AuditEntry.objects.exclude(action="role change").order_by("id")
    actions = list(entries.values_list("action", flat=True))
    assert actions == ["schedule"] * 4 + ["cancel schedule", "edit schedule", "fire schedule now"]


def test_bad_schedule_requests_get_a_4xx(registered: str, target: str, operator: APIClient) -> None:
    base = {"id": "x", "at": soon(60), "target_topic": target, "value": "v"}
    for broken, field in [
        ({"at": "tomorrow-ish"}, "at"),
        ({"target_topic": "no spaces allowed"}, "target_topic"),
        ({"id": ""}, "id"),
        ({"headers": {"scheduler-epoch": "1"}}, "headers"),
    ]:
        response = operator.post(registered, base | broken, "json")
        assert response.status_code == 400 and field in response.json(), (broken, response.json())
    assert operator.get(registered, {"after": "x"}).status_code == 400
    assert operator.put(f"{registered}missing", base, "json").status_code == 404
    assert operator.get("/api/v1/schedules/unknown-topic/").status_code == 404
    assert operator.delete(f"{registered}x/fire").status_code == 405  # fire is POST only
    assert client_as("viewer").post(registered, base, "json").status_code == 403


@pytest.mark.parametrize("value", ["v", ""])
def test_a_lone_surrogate_in_a_header_name_is_a_400_that_quotes_it_escaped(
    value: str, registered: str, target: str, operator: APIClient
) -> None:
    """JSON may carry "\\ud800", which no UTF-8 can. The answer that names the
    bad header must still be writable: with an empty value, DRF keys its error
    by the name itself, and rendering that raw was a 500."""
    body = {"id": "x", "at": soon(60), "target_topic": target, "value": "v"}
    raw = json.dumps(body | {"headers": {"\ud800": value}})  # ascii: the surrogate escaped
    response = operator.post(registered, raw, content_type="application/json")
    assert response.status_code == 400, response.content
    assert "\\ud800" in response.content.decode("ascii")


def test_a_target_outside_the_topics_allowlist_is_refused_with_the_reason(
    registered: str, schedules: SchedulerConfig, target: str, operator: APIClient
) -> None:
    topic = ScheduleTopic.objects.get(topic=schedules.topic)
    topic.allowed_targets = [target]
    topic.save()
    base = {"id": "x", "at": soon(3600), "value": "v"}
    refused = operator.post(registered, base | {"target_topic": "other-queue__undelivered"}, "json")
    assert refused.status_code == 400
    assert "may not fire into other-queue__undelivered" in refused.json()["target_topic"][0]
    assert operator.post(registered, base | {"target_topic": target}, "json").status_code == 201
    assert [s["allowed"] for s in listed(operator, registered, 1)] == [True]
    moved = {"at": soon(3600), "target_topic": "elsewhere", "value": "v"}
    assert operator.put(f"{registered}x", moved, "json").status_code == 400
    # Written before the list was narrowed: listed as not allowed, and fire-now refused.
    topic.allowed_targets = ["only-this-one"]
    topic.save()
    [listed_x] = listed(operator, registered, 1)
    assert (listed_x["id"], listed_x["allowed"]) == ("x", False)
    assert operator.post(f"{registered}x/fire").status_code == 400
    assert AuditEntry.objects.filter(action="fire schedule now").count() == 0
