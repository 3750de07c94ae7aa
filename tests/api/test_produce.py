"""Producing through the API: the enqueue answer says where the message went,
JSON values are checked, a partition may be chosen; the DLQ redrive takes
edits. Real broker, real tracker, the test database."""

import pytest
from rest_framework.test import APIClient

from kmqadmin.console.models import AuditEntry
from kmqadmin.kmq import QueueClient, QueueConfig, QueueProducer
from kmqadmin.kmq import headers as h
from tests.kafka_helpers import read_all
from tests.process import wait_for
from tests.queue_helpers import dlq, poll_until

pytestmark = pytest.mark.django_db


def test_enqueue_answers_where_the_message_went(queue: QueueConfig, operator: APIClient) -> None:
    url = f"/api/v1/queues/{queue.topic}/messages/"
    body = {"value": '{"a": 1}', "encoding": "json", "key": "k", "partition": 1}
    answer = operator.post(url, body | {"headers": {"h": "v"}}, "json")
    assert answer.status_code == 201, answer.content
    done = answer.json()
    assert done == {"id": f"{queue.topic}/1/{done['offset']}", "partition": 1, "offset": 0}
    with QueueClient(queue) as worker:
        [message] = poll_until(worker, 1)
    assert (message.id, message.value, message.headers) == (done["id"], b'{"a": 1}', [("h", b"v")])
    entry = AuditEntry.objects.get(action="enqueue")
    assert entry.after == {"partition": 1, "offset": 0, "key": "k", "headers": ["h"], "bytes": 8}


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        ({"value": '{"a": ', "encoding": "json"}, "value", "not JSON"),
        ({"value": "x", "partition": 3}, "partition", "has no partition 3"),
        ({"value": "x", "partition": -1}, "partition", "greater than or equal to 0"),
    ],
)
def test_bad_json_or_partition_is_a_400_and_nothing_is_written(
    queue: QueueConfig, operator: APIClient, body: dict, field: str, says: str
) -> None:
    answer = operator.post(f"/api/v1/queues/{queue.topic}/messages/", body, "json")
    assert answer.status_code == 400 and says in str(answer.json()[field]), answer.content
    assert read_all(queue, queue.topic) == []


def test_redrive_takes_edits_and_keeps_the_message_id(
    queue: QueueConfig, operator: APIClient, tracker, settings
) -> None:
    producer = QueueProducer(queue)
    producer.send(b"old", key=b"k", headers={"trace": b"t1"})
    producer.flush()
    with QueueClient(queue) as worker:
        [message] = poll_until(worker, 1)
        worker.reject(message, "bad data")
        [letter] = wait_for(lambda: dlq(queue), 30, "the letter")
        url = f"/api/v1/queues/{queue.topic}/dlq/{letter.partition()}/{letter.offset()}/redrive"
        settings.KMQ_MAX_PAYLOAD_BYTES = 10
        too_big = operator.post(url, {"value": "x" * 11}, "json")
        assert too_big.status_code == 413 and "at most 10" in too_big.json()["value"]
        bad = operator.post(url, {"encoding": "base64"}, "json")
        assert bad.status_code == 400 and "needs a value" in bad.json()["encoding"][0]
        edits = {"value": "bmV3", "encoding": "base64", "headers": {"trace": "t2"}}
        answer = operator.post(url, edits, "json")
        assert answer.status_code == 200 and answer.json()["value"] == "old"  # the letter
        [back] = poll_until(worker, 1)
    assert (back.id, back.delivery_count, back.value, back.key) == (message.id, 1, b"new", b"k")
    assert back.headers == [(h.MESSAGE_ID, message.id.encode()), ("trace", b"t2")]
    entry = AuditEntry.objects.get(action="redrive with edits")
    assert entry.after == {"header trace": "t2", "value": "new"}


def test_a_retry_with_the_idempotency_key_gets_the_first_record_not_a_second(
    queue: QueueConfig, operator: APIClient
) -> None:
    url = f"/api/v1/queues/{queue.topic}/messages/"
    body = {"value": "once", "key": "k"}
    first = operator.post(url, body, "json", HTTP_IDEMPOTENCY_KEY="order-7")
    again = operator.post(url, body, "json", HTTP_IDEMPOTENCY_KEY="order-7")
    assert (first.status_code, again.status_code) == (201, 201), again.content
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first
    other = operator.post(url, body, "json", HTTP_IDEMPOTENCY_KEY="order-8")
    assert other.status_code == 201 and other.json() != first.json()
    values = [r.value() for r in read_all(queue, queue.topic)]
    assert values.count(b"once") == 2  # order-7 once, order-8 once
    assert AuditEntry.objects.filter(action="enqueue").count() == 2


def test_an_idempotency_key_reused_for_another_message_or_malformed_is_refused(
    queue: QueueConfig, operator: APIClient
) -> None:
    url = f"/api/v1/queues/{queue.topic}/messages/"
    assert operator.post(url, {"value": "a"}, "json", HTTP_IDEMPOTENCY_KEY="k1").status_code == 201
    reused = operator.post(url, {"value": "b"}, "json", HTTP_IDEMPOTENCY_KEY="k1")
    assert reused.status_code == 422 and "another message" in reused.json()["detail"]
    for bad in ("x" * 256, "tab\there"):
        refused = operator.post(url, {"value": "c"}, "json", HTTP_IDEMPOTENCY_KEY=bad)
        assert refused.status_code == 400, refused.content
        assert "printable characters" in refused.json()["Idempotency-Key"]
    assert [r.value() for r in read_all(queue, queue.topic)] == [b"a"]
