"""Bodies are capped before parsing, and a record larger than the topic
takes is a 413 saying the limit (it was a 503 from a failed produce)."""

import pytest
from rest_framework.test import APIClient

from kmqadmin.console.services.clusters import clients
from kmqadmin.kafka.admin.message_size import PRODUCER_DEFAULT, RECORD_OVERHEAD
from kmqadmin.kmq import QueueConfig
from tests.kafka_helpers import read_all

pytestmark = pytest.mark.django_db


def test_a_body_over_the_cap_is_refused_unread(
    queue: QueueConfig, operator: APIClient, settings
) -> None:
    settings.KMQ_MAX_REQUEST_BYTES = 1000
    body = '{"value": "' + "x" * 1000 + '"}'
    url = f"/api/v1/queues/{queue.topic}/messages/"
    answer = operator.post(url, body, content_type="application/json")
    assert answer.status_code == 413 and "at most 1000" in answer.json()["detail"]
    assert read_all(queue, queue.topic) == []


def test_a_record_larger_than_kafka_takes_is_a_413_with_the_limit(
    queue: QueueConfig, operator: APIClient
) -> None:
    limit = PRODUCER_DEFAULT - RECORD_OVERHEAD  # the broker's default topic takes more
    assert clients.record_limit(queue) == limit
    url = f"/api/v1/queues/{queue.topic}/messages/"
    answer = operator.post(url, {"value": "x" * 1_000_001}, "json")
    assert answer.status_code == 413 and f"at most {limit}" in answer.json()["value"]
    assert operator.post(url, {"value": "x" * limit}, "json").status_code == 201
    [record] = read_all(queue, queue.topic)
    assert len(record.value()) == limit


def test_a_body_nested_deeper_than_python_recurses_is_a_400(
    queue: QueueConfig, operator: APIClient
) -> None:
    depth = 100_000
    body = '{"value": ' + "[" * depth + "]" * depth + "}"
    url = f"/api/v1/queues/{queue.topic}/messages/"
    answer = operator.post(url, body, content_type="application/json")
    assert answer.status_code == 400 and "nested too deeply" in answer.json()["detail"]
