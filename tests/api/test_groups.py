"""The API's groups endpoints on the real broker: a cluster's consumer and
share groups, a group's detail, and the admin-only reset with its dry run."""

import time
from urllib.parse import quote

import pytest

from kmqadmin.console.models import AuditEntry, Cluster
from kmqadmin.kafka.admin.consumer_groups import ConsumerGroupAdmin
from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from tests.api.conftest import client_as
from tests.group_helpers import GroupMember, consumed_group
from tests.process import wait_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def group(kafka: EmbeddedBroker, topic: str) -> str:
    Cluster.objects.create(name="local", bootstrap_servers=kafka.bootstrap_servers)
    ensure_topics(kafka.bootstrap_servers, {topic: 2})
    return consumed_group(kafka.bootstrap_servers, topic, f"{topic}/readers?")  # any character


def url(group: str, tail: str = "/") -> str:
    return f"/api/v1/clusters/local/groups/consumer/{quote(group)}{tail}"


def test_the_list_and_a_group(group: str, topic: str) -> None:
    viewer = client_as("viewer")
    listed = viewer.get("/api/v1/clusters/local/groups/").json()
    assert {
        "group_id": group,
        "kind": "consumer",
        "state": "Empty",
        "type": "Classic",
        "queue": None,
    } in listed["groups"]
    assert listed["errors"] == []
    detail = viewer.get(url(group)).json()
    assert detail["state"] == "Empty" and detail["members"] == []
    assert [
        (p["topic"], p["partition"], p["offset"], p["end"], p["lag"]) for p in detail["partitions"]
    ] == [(topic, 0, 4, 4, 0), (topic, 1, 4, 4, 0)]
    assert viewer.get(url("nobody")).status_code == 404
    assert viewer.get("/api/v1/clusters/nowhere/groups/").status_code == 404


def test_a_dry_run_moves_nothing_and_its_offsets_are_applied_exactly(
    kafka: EmbeddedBroker, group: str, topic: str
) -> None:
    for role in ("viewer", "operator"):
        assert client_as(role).post(url(group, "/reset"), {"to": "earliest"}).status_code == 403
    admin = client_as("admin")
    half_hour_ago = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 1800))
    body = {"to": "time", "at": half_hour_ago, "dry_run": True}
    planned = admin.post(url(group, "/reset"), body, format="json").json()
    assert planned["dry_run"] is True and planned["errors"] == {}
    assert planned["moves"] == [
        {"topic": topic, "partition": 0, "current": 4, "new": 2},
        {"topic": topic, "partition": 1, "current": 4, "new": 2},
    ]
    admin_client = ConsumerGroupAdmin(kafka.bootstrap_servers)
    assert admin_client.positions(group) == {(topic, 0): 4, (topic, 1): 4}
    chosen = {f"{topic}:1": 1}  # an edited plan: one partition, its own offset
    done = admin.post(
        url(group, "/reset"), {"to": "time", "at": half_hour_ago, "offsets": chosen}, format="json"
    )
    assert done.status_code == 200 and done.json()["moves"] == [
        {"topic": topic, "partition": 1, "current": 4, "new": 1}
    ]
    assert admin_client.positions(group) == {(topic, 0): 4, (topic, 1): 1}
    entry = AuditEntry.objects.get(action="reset group offsets")
    assert entry.before["offsets"] == {f"{topic}:1": 4} and entry.after["offsets"] == chosen


@pytest.mark.parametrize(
    ("body", "status", "reason"),
    [
        ({"to": "offset", "offset": 9}, 400, "outside its log"),
        ({"to": "offset"}, 400, "offset"),
        ({"to": "time", "at": "not a time"}, 400, "at"),
        ({"to": "earliest", "partition": 0}, 400, "a partition needs its topic"),
        ({"to": "earliest", "topic": "no-such-topic-at-all"}, 400, "topic no-such-topic-at-all"),
        ({"to": "earliest", "offsets": {"x": 1}}, 400, "not topic:partition"),
    ],
)
def test_bad_input_is_4xx_with_its_reason(group: str, body: dict, status: int, reason: str) -> None:
    answer = client_as("admin").post(url(group, "/reset"), body, format="json")
    assert answer.status_code == status and reason in answer.content.decode(), answer.content


def test_unknown_group_is_404_and_members_409(
    kafka: EmbeddedBroker, group: str, topic: str
) -> None:
    admin = client_as("admin")
    missing = admin.post(url("nobody", "/reset"), {"to": "earliest"}, format="json")
    assert missing.status_code == 404 and "no consumer group nobody" in missing.json()["detail"]
    with GroupMember(kafka.bootstrap_servers, group, topic) as member:
        member.poll()
        wait_for(lambda: admin.get(url(group)).json()["members"], 30, "the member to join")
        refused = admin.post(url(group, "/reset"), {"to": "earliest"}, format="json")
    assert refused.status_code == 409 and "is not empty" in refused.json()["detail"]
