"""Header names and values, keys and schedule ids a client sends are checked
before any Kafka call: a lone surrogate in a header name used to segfault
produce() and take the web process down with it."""

import json

import pytest
from rest_framework.test import APIClient

from kmqadmin.console.models import Cluster, ScheduleTopic
from kmqadmin.kmq import QueueConfig
from kmqadmin.kmq.given_headers import MAX_HEADERS, MAX_TOTAL_BYTES
from kmqadmin.scheduler import SchedulerConfig
from tests.kafka_helpers import read_all
from tests.schedule_helpers import fired

pytestmark = pytest.mark.django_db

BAD = [
    ({"headers": {"\ud800": "x"}}, "headers", "not UTF-8 encodable"),
    ({"headers": {"h": "\udfff"}}, "headers", "Surrogate"),
    ({"headers": {"a\u0000b": "x"}}, "headers", "NUL"),
    ({"headers": {"": "x"}}, "headers", "empty"),
    ({"headers": {"kmq-id": "q/0/0"}}, "headers", "kmqadmin's own"),
    ({"headers": {"scheduler-epoch": "1"}}, "headers", "kmqadmin's own"),
    ({"headers": {"n" * 257: "x"}}, "headers", "at most 256"),
    ({"headers": {f"h{i}": "x" for i in range(MAX_HEADERS + 1)}}, "headers", "at most"),
    ({"headers": {f"h{i}": "x" * 30_000 for i in range(3)}}, "headers", str(MAX_TOTAL_BYTES)),
    ({"key": "\ud800"}, "key", "Surrogate"),
    ({"key": "k" * 4097}, "key", "at most 4096"),
    ({"value": "\ud800"}, "value", "Surrogate"),
]


def post_raw(client: APIClient, url: str, body: dict):
    """JSON as a client may send it: lone surrogates as \\u escapes."""
    return client.post(url, json.dumps(body), content_type="application/json")


@pytest.mark.parametrize(("broken", "field", "says"), BAD)
def test_enqueue_refuses_what_a_producer_cannot_write(
    queue: QueueConfig, operator: APIClient, broken: dict, field: str, says: str
) -> None:
    answer = post_raw(operator, f"/api/v1/queues/{queue.topic}/messages/", {"value": "x"} | broken)
    assert answer.status_code == 400, answer.content
    assert says in str(answer.json()[field])
    assert read_all(queue, queue.topic) == []


@pytest.mark.parametrize(
    ("broken", "field", "says"), [*BAD, ({"id": "a\ud800"}, "id", "Surrogate")]
)
def test_schedules_refuse_what_a_producer_cannot_write(
    schedules: SchedulerConfig, operator: APIClient, broken: dict, field: str, says: str
) -> None:
    cluster = Cluster.objects.create(name="local", bootstrap_servers=schedules.bootstrap_servers)
    ScheduleTopic.objects.create(cluster=cluster, topic=schedules.topic, group_id="g")
    url = f"/api/v1/schedules/{schedules.topic}/"
    base = {"id": "s", "at": "2030-01-01T00:00:00Z", "target_topic": "t", "value": "v"}
    answer = post_raw(operator, url, base | broken)
    assert answer.status_code == 400, answer.content
    assert says in str(answer.json()[field])
    assert fired(schedules, schedules.topic) == []
