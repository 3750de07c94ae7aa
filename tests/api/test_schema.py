"""The OpenAPI schema against the real app, test database and broker.

Schemathesis sends requests generated from the schema, valid and not: no
input may yield a 500. And every documented operation, called with real
data, answers exactly what the schema documents.
"""

from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, settings
from jsonschema import Draft7Validator
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from schemathesis.checks import not_a_server_error

from kmqadmin.console.models import AlertEvent, Cluster, Queue, ScheduleTopic
from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueClient, QueueConfig
from kmqadmin.scheduler import SchedulerConfig
from tests.group_helpers import consumed_group
from tests.process import wait_for
from tests.queue_helpers import poll_until
from tests.users import user_with

schema = schemathesis.openapi.from_wsgi("/api/v1/schema/", get_wsgi_application())

pytestmark = pytest.mark.django_db


@pytest.fixture
def token(kafka: EmbeddedBroker) -> str:
    """An operator's token, and a queue and schedules topic named "fuzz" so
    that generated requests reach Kafka too, not only 404s."""
    cluster = Cluster.objects.create(name="local", bootstrap_servers=kafka.bootstrap_servers)
    fuzz = Queue.objects.create(cluster=cluster, topic="fuzz", group_id="fuzz-workers")
    fuzz.config().ensure_topics(partitions=1)
    schedules = ScheduleTopic.objects.create(cluster=cluster, topic="fuzz", group_id="fuzz-s")
    schedules.config().ensure_topics(partitions=1)
    return Token.objects.create(user=user_with("operator")).key


@schema.parametrize()
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_no_request_gets_a_server_error(case, token: str) -> None:
    if "topic" in (case.path_parameters or {}):
        case.path_parameters["topic"] = "fuzz"
    if case.path.endswith("/tail"):  # a stream: followed for one second, not five minutes
        case.query = (case.query or {}) | {"seconds": 1}
    case.call_and_validate(headers={"Authorization": f"Token {token}"}, checks=[not_a_server_error])


class Answers:
    """Calls the API as an operator and checks every answer against the schema
    the live app serves, made strict: a key the schema does not document is an
    error, as is a documented key missing or of another type. Notes which
    documented operations it exercised."""

    def __init__(self, client: APIClient, document: dict) -> None:
        self.client = client
        self.document = strict(document)
        self.exercised: set[tuple[str, str]] = set()

    def call(
        self,
        method: str,
        template: str,
        status: int,
        *,
        body: dict | None = None,
        query: dict | None = None,
        **path: object,
    ) -> Any:
        url = template.format(**path) + (f"?{urlencode(query)}" if query else "")
        response = getattr(self.client, method)(url, body, format="json")
        assert response.status_code == status, (method, url, response.content)
        answer = response.json() if response.content else None
        assert self.errors(method, template, status, answer) == [], (method, url, answer)
        self.exercised.add((method, template))
        return answer

    def errors(self, method: str, template: str, status: int, answer: Any) -> list[str]:
        responses = self.document["paths"][template][method]["responses"]
        assert str(status) in responses, f"{method} {template}: {status} is not documented"
        content = responses[str(status)].get("content")
        if content is None:
            return [] if answer is None else [f"a body where none is documented: {answer}"]
        schema = content["application/json"]["schema"] | {"components": self.document["components"]}
        return [error.message for error in Draft7Validator(schema).iter_errors(answer)]

    def documented(self) -> set[tuple[str, str]]:
        methods = {"get", "post", "put", "patch", "delete"}
        return {
            (method, template)
            for template, operations in self.document["paths"].items()
            for method in operations.keys() & methods
        }


def strict(node: Any) -> Any:
    """OpenAPI 3.0 schema objects as JSON Schema (``nullable`` becomes a null
    type) that refuses keys it does not name: drf-spectacular leaves objects
    open, and an open schema would not see an answer's undocumented key."""
    if isinstance(node, list):
        return [strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: strict(value) for key, value in node.items()}
    if out.pop("nullable", False):
        out = (
            out | {"type": [out["type"], "null"]}
            if "type" in out
            else {"anyOf": [out, {"type": "null"}]}
        )
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


@pytest.mark.usefixtures("tracker", "eager_tasks")
def test_every_documented_answer_matches_the_live_schema(
    queue: QueueConfig,
    schedules: SchedulerConfig,
    target: str,
    operator: APIClient,
) -> None:
    """Real data on the real broker through every documented operation: each
    answer is what the schema says, no key more or less."""
    cluster = Cluster.objects.get()
    ScheduleTopic.objects.create(cluster=cluster, topic=schedules.topic, group_id="s")
    api = Answers(operator, schema.raw_schema)
    topic = {"topic": queue.topic}

    assert [q["topic"] for q in api.call("get", "/api/v1/queues/", 200)] == [queue.topic]
    for n in range(3):
        body = {"value": f"m{n}", "key": f"k{n}", "headers": {"h": "v"}}
        api.call("post", "/api/v1/queues/{topic}/messages/", 201, body=body, **topic)
    with QueueClient(queue) as worker:
        extended, rejected, _ = sorted(poll_until(worker, 3), key=lambda m: m.id)
        wait_for(
            lambda: (
                api.call("get", "/api/v1/queues/{topic}/in-flight/", 200, **topic)["count"] == 3
            ),
            20,
            "three in flight",
        )
        page = api.call(
            "get", "/api/v1/queues/{topic}/in-flight/", 200, query={"limit": 2}, **topic
        )
        assert page["next"] is not None
        stats = api.call("get", "/api/v1/queues/{topic}/stats", 200, **topic)
        assert stats["in_flight"] == 3
        # The drift this test is for: a key the schema lacks is caught.
        undocumented = stats | {"undocumented": 1}
        assert api.errors("get", "/api/v1/queues/{topic}/stats", 200, undocumented)
        action = "/api/v1/queues/{topic}/messages/{message_id}/{action}"
        api.call(
            "post",
            action,
            200,
            body={"ms": 60_000, "partition": extended.partition, "offset": extended.offset},
            message_id=extended.id,
            action="extend",
            **topic,
        )
        api.call(
            "post",
            action,
            200,
            body={"reason": "bad", "partition": rejected.partition, "offset": rejected.offset},
            message_id=rejected.id,
            action="reject",
            **topic,
        )
    on_partition = {"partition": rejected.partition}
    letters = wait_for(
        lambda: api.call("get", "/api/v1/queues/{topic}/dlq/", 200, query=on_partition, **topic)[
            "results"
        ],
        30,
        "a letter",
    )
    [letter] = letters
    redrive = "/api/v1/queues/{topic}/dlq/{partition}/{offset}/redrive"
    api.call("post", redrive, 200, partition=letter["partition"], offset=letter["offset"], **topic)
    started = api.call(
        "post",
        "/api/v1/queues/{topic}/dlq/redrive",
        202,
        query={"reason": "rejected"} | on_partition,
        **topic,
    )
    api.call("get", "/api/v1/tasks/{task_id}", 200, task_id=started["task"])

    listed = "/api/v1/schedules/{topic}/"
    at = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    new = {"id": "s-1", "at": at, "target_topic": target, "value": "v", "key": "k"}
    on = {"topic": schedules.topic}
    api.call("post", listed, 201, body=new, **on)
    wait_for(lambda: api.call("get", listed, 200, **on)["count"] == 1, 20, "the schedule")
    detail = "/api/v1/schedules/{topic}/{schedule_id}"
    assert api.call("get", detail, 200, schedule_id="s-1", **on)["id"] == "s-1"
    edited = {"at": at, "target_topic": target, "value": "w"}
    api.call("put", detail, 200, body=edited, schedule_id="s-1", **on)
    api.call("post", "/api/v1/schedules/{topic}/{schedule_id}/fire", 200, schedule_id="s-1", **on)
    api.call("delete", detail, 204, schedule_id="s-1", **on)

    # Registering and editing a queue is an admin's, and so is a share group's reset.
    admin = APIClient()
    admin.force_authenticate(user_with("admin"))
    api.client = admin
    share = {"topic": f"{queue.topic}-share"}
    registration = {"cluster": cluster.name, "group_id": "g", "backend": "share", **share}
    api.call("post", "/api/v1/queues/", 201, body=registration)
    one = "/api/v1/queues/{topic}/"
    assert api.call("get", one, 200, **share)["markers_topic"] is None
    api.call("patch", one, 200, body={"max_redeliveries": 2}, **share)
    api.call("put", one, 200, body=registration | {"max_redeliveries": 1}, **share)
    assert api.call("get", "/api/v1/queues/{topic}/share-group", 200, **share)["errors"] == []
    api.call(
        "post", "/api/v1/queues/{topic}/share-group/reset", 200, body={"to": "latest"}, **share
    )

    # A cluster's groups, and an admin's reset of one: a dry run, then exactly it.
    on_cluster = {"cluster": cluster.name}
    ensure_topics(cluster.bootstrap, {f"{queue.topic}-read": 2})
    group = consumed_group(cluster.bootstrap, f"{queue.topic}-read", f"{queue.topic}-readers")
    listed = api.call("get", "/api/v1/clusters/{cluster}/groups/", 200, **on_cluster)
    assert group in [g["group_id"] for g in listed["groups"]]
    one_group = on_cluster | {"kind": "consumer", "group_id": group}
    api.call("get", "/api/v1/clusters/{cluster}/groups/{kind}/{group_id}/", 200, **one_group)
    reset = "/api/v1/clusters/{cluster}/groups/{kind}/{group_id}/reset"
    plan = api.call("post", reset, 200, body={"to": "earliest", "dry_run": True}, **one_group)
    body = {"to": "earliest", "offsets": plan["offsets"]}
    assert api.call("post", reset, 200, body=body, **one_group)["dry_run"] is False

    # Any topic of the cluster, read as the console's browser reads it.
    listed = api.call("get", "/api/v1/clusters/{cluster}/topics/", 200, **on_cluster)
    assert {"name": queue.topic, "kind": "queue"} in listed
    on_topic = on_cluster | topic
    seek = {"partition": rejected.partition, "start": "oldest"}
    records = "/api/v1/clusters/{cluster}/topics/{topic}/records/"
    page = api.call("get", records, 200, query=seek, **on_topic)
    [first, *_] = page["records"]
    one = "/api/v1/clusters/{cluster}/topics/{topic}/records/{partition}/{offset}"
    where = {"partition": first["partition"], "offset": first["offset"]}
    assert api.call("get", one, 200, **on_topic, **where)["record"] == first

    # Its live tail, for a second: an event stream, not JSON (tests/api/test_tail.py reads one).
    tail = "/api/v1/clusters/{cluster}/topics/{topic}/tail"
    streamed = operator.get(tail.format(**on_topic), {"seconds": 1})
    assert streamed.status_code == 200 and streamed["Content-Type"] == "text/event-stream"
    assert b"event: end" in b"".join(streamed)  # the test client reads it synchronously
    api.exercised.add(("get", tail))

    # What all of that left in the audit log, newest first, a page at a time.
    newest = api.call("get", "/api/v1/audit/", 200, query={"limit": 2})
    assert newest["results"][0]["action"] == "reset group offsets" and newest["next"] is not None
    assert api.call("get", "/api/v1/audit/", 200, query={"after": newest["next"]})["results"]

    # Alert rules on the queue and the schedules topic (an admin's), and their history.
    rules = "/api/v1/queues/{topic}/alerts/"
    rule = {"condition": "dead_letters", "threshold": 0, "webhook_url": "http://127.0.0.1:9/x"}
    made = api.call("post", rules, 201, body=rule | {"emails": ["a@example.com"]}, **topic)
    assert [r["id"] for r in api.call("get", rules, 200, **topic)] == [made["id"]]
    offered = api.call("post", "/api/v1/queues/{topic}/alerts/defaults", 201, **topic)
    assert "dead_letters" not in {r["condition"] for r in offered}
    on_schedules = "/api/v1/schedules/{topic}/alerts/"
    api.call("post", on_schedules, 201, body={"condition": "group_lag", "threshold": 9}, **on)
    assert len(api.call("get", on_schedules, 200, **on)) == 1
    assert len(api.call("get", "/api/v1/alerts/", 200)) == len(offered) + 2
    one = {"id": made["id"]}
    assert api.call("get", "/api/v1/alerts/{id}", 200, **one)["target"] == queue.topic
    api.call("patch", "/api/v1/alerts/{id}", 200, body={"threshold": 3}, **one)
    api.call("put", "/api/v1/alerts/{id}", 200, body=rule | {"slack": True}, **one)
    api.call("post", "/api/v1/alerts/{id}/silence", 200, body={"minutes": 30}, **one)
    AlertEvent.objects.create(
        rule_id=made["id"], at=datetime.now(UTC), kind="firing", value=1, threshold=0, told="sent"
    )
    [event] = api.call("get", "/api/v1/alerts/history/", 200, query={"rule": made["id"]})["results"]
    assert event["kind"] == "firing"
    api.call("delete", "/api/v1/alerts/{id}", 204, **one)

    # The schema document itself is the one answer not described by a component.
    assert api.documented() - api.exercised == {("get", "/api/v1/schema/")}
