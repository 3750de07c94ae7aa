"""Producing by hand from the console: the produce page, reproduce with
edits, redrive with edits; on the real broker and the test database."""

import base64

import pytest

from kmqadmin.console.models import AuditEntry, Queue
from kmqadmin.kmq import QueueClient, QueueConfig, QueueProducer, ShareQueueClient
from kmqadmin.kmq import headers as h
from tests.console.conftest import client_as
from tests.kafka_helpers import read_all
from tests.process import wait_for
from tests.queue_helpers import dlq, poll_until

pytestmark = pytest.mark.django_db


def form(value: str, encoding: str = "utf-8", key: str = "", partition: str = "", **headers):
    names, values = list(headers), list(headers.values())
    return {
        "value": value,
        "encoding": encoding,
        "key": key,
        "partition": partition,
        "header_name": [*names, ""],
        "header_value": [*values, ""],
    }


def written(answer) -> str:
    """The kmq-id the page says it wrote."""
    assert answer.status_code == 200, answer.content.decode()
    return answer.content.decode().split('data-written="')[1].split('"')[0]


@pytest.mark.parametrize(
    ("value", "encoding", "sent"),
    [
        ("plain text ü", "utf-8", "plain text ü".encode()),
        ('{"order": 42}', "json", b'{"order": 42}'),
        (base64.b64encode(b"\x00\xffbin").decode(), "base64", b"\x00\xffbin"),
    ],
)
def test_an_operator_produces_in_each_value_form_and_a_worker_gets_it(
    queue: QueueConfig, registered: Queue, value: str, encoding: str, sent: bytes
) -> None:
    operator = client_as("operator")
    url = f"/queues/{queue.topic}/produce"
    assert b"Produce a message" in operator.get(url).content
    answer = operator.post(url, form(value, encoding, key="k1", partition="2", trace="t1"))
    message_id = written(answer)
    assert message_id.startswith(f"{queue.topic}/2/")
    assert f'href="/queues/{queue.topic}/messages/{message_id}' in answer.content.decode()
    with QueueClient(queue) as worker:
        [message] = poll_until(worker, 1)
    assert (message.id, message.partition, message.delivery_count) == (message_id, 2, 1)
    assert (message.value, message.key, message.headers) == (sent, b"k1", [("trace", b"t1")])
    assert operator.get(f"/queues/{queue.topic}/messages/{message_id}").status_code == 200
    entry = AuditEntry.objects.get(action="enqueue")
    assert (entry.target, entry.status, entry.user.username) == (queue.topic, "done", "operator")
    offset = int(message_id.rsplit("/", 1)[1])
    assert entry.after == {
        "partition": 2,
        "offset": offset,
        "key": "k1",
        "headers": ["trace"],
        "bytes": len(sent),
    }


@pytest.mark.parametrize(
    ("fields", "status", "says"),
    [
        (form('{"order": ', "json"), 400, "not JSON"),
        (form("not base64!", "base64"), 400, "not base64"),
        (form("x", **{"kmq-id": "forged"}), 400, "kmqadmin&#x27;s own"),
        (form("x", partition="7"), 400, "has no partition 7"),
        (form("x", encoding="rot13"), 400, "rot13"),
        (form("x" * 11), 413, "at most 10"),
    ],
)
def test_a_bad_or_oversize_message_is_refused_saying_why_and_nothing_is_written(
    queue: QueueConfig, registered: Queue, settings, fields: dict, status: int, says: str
) -> None:
    settings.KMQ_MAX_PAYLOAD_BYTES = 10
    answer = client_as("operator").post(f"/queues/{queue.topic}/produce", fields)
    assert answer.status_code == status
    page = answer.content.decode()
    assert "Nothing written" in page and says in page, page
    assert read_all(queue, queue.topic) == []
    assert not AuditEntry.objects.filter(action="enqueue").exists()


def test_viewers_may_not_produce_nor_edit_and_see_no_links(
    queue: QueueConfig, registered: Queue
) -> None:
    viewer = client_as("viewer")
    for url in (f"/queues/{queue.topic}/produce", f"/queues/{queue.topic}/dlq/0/0/edit"):
        assert viewer.get(url).status_code == 403
        assert viewer.post(url, form("x")).status_code == 403
        assert client_as(None).get(url).status_code == 302
    assert b"Produce a message" not in viewer.get(f"/queues/{queue.topic}/").content
    assert b"Produce a message" in client_as("operator").get(f"/queues/{queue.topic}/").content
    assert read_all(queue, queue.topic) == []


def test_reproduce_with_edits_writes_a_new_message_without_kmqs_own_headers(
    queue: QueueConfig, registered: Queue
) -> None:
    producer = QueueProducer(queue)
    copied = {"trace": b"t1", h.REDELIVERY_COUNT: h.encode_count(2)}  # a consumed copy sent on
    producer.send(b'{"total": "9.90"}', key=b"customer-7", headers=copied, partition=1)
    producer.flush()
    source = f"{queue.topic}/1/0"
    operator = client_as("operator")
    story = operator.get(f"/queues/{queue.topic}/messages/{source}").content.decode()
    assert "Reproduce with edits" in story
    url = f"/queues/{queue.topic}/produce?from={source}"
    page = operator.get(url).content.decode()
    assert "customer-7" in page and "9.90" in page and 'value="trace"' in page
    assert h.REDELIVERY_COUNT not in page
    answer = operator.post(url, form('{"total": "19.90"}', key="customer-7", trace="t2"))
    message_id = written(answer)
    assert message_id != source
    with QueueClient(queue) as worker:
        got = {m.id: m for m in poll_until(worker, 2)}
    again = got[message_id]
    assert (again.value, again.key) == (b'{"total": "19.90"}', b"customer-7")
    assert (again.headers, again.delivery_count) == ([("trace", b"t2")], 1)
    entry = AuditEntry.objects.get(action="reproduce")
    assert entry.before == {"from": source} and entry.after["headers"] == ["trace"]
    elsewhere = f"/queues/{queue.topic}/produce?from=other-topic/0/0"
    refused = operator.post(elsewhere, form("x"))
    assert refused.status_code == 400 and "not a kmq-id of" in refused.content.decode()


def reject_into_the_dlq(queue: QueueConfig) -> tuple[str, object]:
    """A message a worker rejects, and its letter once the tracker wrote it."""
    producer = QueueProducer(queue)
    producer.send(b'{"order": 1}', key=b"k-old", headers={"trace": b"t1", "keep": b"same"})
    producer.flush()
    with QueueClient(queue) as worker:
        [message] = poll_until(worker, 1)
        worker.reject(message, "bad data")
    [letter] = wait_for(lambda: dlq(queue), 30, "the letter")
    return message.id, letter


def test_redrive_with_edits_sends_the_edited_letter_back_as_a_redrive_does(
    queue: QueueConfig, registered: Queue, tracker
) -> None:
    message_id, letter = reject_into_the_dlq(queue)
    operator = client_as("operator")
    where = f"{letter.partition()}/{letter.offset()}"
    listing = operator.get(f"/queues/{queue.topic}/dlq/", {"partition": letter.partition()})
    assert f"/dlq/{where}/edit" in listing.content.decode()
    url = f"/queues/{queue.topic}/dlq/{where}/edit"
    page = operator.get(url).content.decode()
    assert "k-old" in page and 'value="trace"' in page and "kmq-dlq-reason" not in page
    answer = operator.post(url, form('{"order": 2}', key="k-new", trace="t2", keep="same"))
    assert answer.status_code == 200 and f'data-redriven="{message_id}"' in answer.content.decode()
    with QueueClient(queue) as worker:
        [back] = poll_until(worker, 1)
    assert (back.id, back.delivery_count, back.partition) == (message_id, 1, letter.partition())
    assert (back.value, back.key) == (b'{"order": 2}', b"k-new")
    assert back.headers == [
        (h.MESSAGE_ID, message_id.encode()),
        ("trace", b"t2"),
        ("keep", b"same"),
    ]
    entry = AuditEntry.objects.get(action="redrive with edits")
    assert (entry.target, entry.status) == (message_id, "done")
    assert entry.before == {
        "partition": letter.partition(),
        "offset": letter.offset(),
        "key": "k-old",
        "header trace": "t1",
        "value": '{"order": 1}',
    }
    assert entry.after == {"key": "k-new", "header trace": "t2", "value": '{"order": 2}'}


def test_an_oversize_edit_redrives_nothing(
    queue: QueueConfig, registered: Queue, tracker, settings
) -> None:
    _, letter = reject_into_the_dlq(queue)
    settings.KMQ_MAX_PAYLOAD_BYTES = 10
    url = f"/queues/{queue.topic}/dlq/{letter.partition()}/{letter.offset()}/edit"
    operator = client_as("operator")
    answer = operator.post(url, form("x" * 11))
    assert answer.status_code == 413 and "at most 10" in answer.content.decode()
    assert len(read_all(queue, queue.topic)) == 1  # the rejected message only
    assert not AuditEntry.objects.filter(action="redrive with edits").exists()
    assert operator.get(f"/queues/{queue.topic}/dlq/0/999/edit").status_code == 404


def test_a_share_queue_takes_a_produced_message_like_any_topic(registered: Queue) -> None:
    registered.backend, registered.message_timeout_ms = "share", 60_000  # the broker's bound
    registered.save()
    config = registered.config()
    config.ensure_topics(partitions=3)  # the share group's configs
    message_id = written(
        client_as("operator").post(f"/queues/{config.topic}/produce", form("shared", key="s"))
    )
    with ShareQueueClient(config) as worker:
        [message] = poll_until(worker, 1)
        worker.ack(message)
    assert (message.id, message.value, message.key) == (message_id, b"shared", b"s")


def test_the_browsers_message_view_leads_to_reproduce_and_redrive_with_edits(
    queue: QueueConfig, registered: Queue, tracker
) -> None:
    _, letter = reject_into_the_dlq(queue)
    producer = QueueProducer(queue)
    producer.send(value=b"browse me", key=b"k")
    producer.flush()
    with QueueClient(queue) as worker:
        [kept] = poll_until(worker, 1)
    base = f"/clusters/{registered.cluster.name}/topics"
    operator, viewer = client_as("operator"), client_as("viewer")

    record = f"{base}/{queue.topic}/{kept.partition}/{kept.offset}"
    page = operator.get(record).content.decode()
    link = page.split('data-action="reproduce-with-edits"')[0].rsplit('href="', 1)[1]
    reproduce = operator.get(link.split('"')[0].replace("&amp;", "&"))
    assert reproduce.status_code == 200 and b"browse me" in reproduce.content

    page = operator.get(f"{base}/{queue.dlq_topic}/{letter.partition()}/{letter.offset()}")
    link = page.content.decode().split('data-action="redrive-with-edits"')[0].rsplit('href="', 1)[1]
    edit = operator.get(link.split('"')[0].replace("&amp;", "&"))
    assert edit.status_code == 200 and b"k-old" in edit.content

    assert b"data-action=" not in viewer.get(record).content


def test_a_message_whose_key_a_form_would_change_is_not_reproduced(
    queue: QueueConfig, registered: Queue
) -> None:
    producer = QueueProducer(queue)
    producer.send(b"value", key=b"\xff\xfe binary key")
    producer.flush()
    with QueueClient(queue) as worker:
        [message] = poll_until(worker, 1)
    answer = client_as("operator").get(f"/queues/{queue.topic}/produce", {"from": message.id})
    assert answer.status_code == 409
    assert b"its key is not UTF-8 text" in answer.content
