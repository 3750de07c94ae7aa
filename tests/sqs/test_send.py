"""SendMessage and SendMessageBatch by boto3, in both protocols, against the
real web process and broker: each message lands in the queue topic as a
queue producer writes it, its attributes in headers, and the answer's
digests are the ones moto (an SQS implementation of its own) computes."""

import json
import time
import uuid

import pytest
from confluent_kafka import Consumer
from moto.sqs.models import Message as MotoMessage

from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueConfig
from kmqadmin.kmq import headers as h
from kmqadmin.scheduler import Scheduler
from kmqadmin.sqs.actions.send import message_id
from tests.process import manage, wait_for
from tests.sqs.clients import PROTOCOLS, Web, error_of, sqs

pytestmark = pytest.mark.parametrize("protocol", PROTOCOLS)

ATTRIBUTES = {
    "trace": {"DataType": "String", "StringValue": "abc-123 ✓"},
    "price": {"DataType": "Number.float", "StringValue": "12.50"},
    "blob": {"DataType": "Binary", "BinaryValue": b"\x00\xffraw"},
}


def queue(web: Web, protocol: str, **attributes: str) -> tuple[str, str]:
    name = f"send-{uuid.uuid4().hex[:8]}"
    url = sqs(web, "boss", protocol).create_queue(QueueName=name, Attributes=attributes)
    return name, url["QueueUrl"]


def records(kafka: EmbeddedBroker, topic: str, count: int) -> list:
    consumer = Consumer(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "group.id": f"read-{uuid.uuid4().hex}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    found: list = []
    try:
        for _ in range(100):
            found += [r for r in consumer.consume(count, 0.2) if r.error() is None]
            if len(found) >= count:
                break
        found += [r for r in consumer.consume(10, 1.0) if r.error() is None]  # no more than count
    finally:
        consumer.close()
    return found


def moto_digests(body: str, attributes: dict) -> tuple[str, str]:
    oracle = MotoMessage("id", body)
    oracle.message_attributes = attributes
    return oracle.body_md5, oracle.attribute_md5


def test_a_sent_message_is_a_record_with_its_attributes_and_sqs_digests(
    web: Web, kafka: EmbeddedBroker, protocol: str
) -> None:
    name, url = queue(web, protocol)
    body = "héllo\r\nwörld 🎉"
    trace = {"AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1-5759e988-bd86"}}
    sent = sqs(web, "worker", protocol).send_message(
        QueueUrl=url,
        MessageBody=body,
        MessageAttributes=ATTRIBUTES,
        MessageGroupId="cart-7",
        MessageSystemAttributes=trace,
    )
    assert (sent["MD5OfMessageBody"], sent["MD5OfMessageAttributes"]) == moto_digests(
        body, ATTRIBUTES
    )
    # System attributes are digested as message attributes are (SQS's documentation).
    assert sent["MD5OfMessageSystemAttributes"] == moto_digests(body, trace)[1]
    [record] = records(kafka, name, 1)
    kmq_id = h.message_id(name, record.partition(), record.offset())
    assert sent["MessageId"] == message_id(kmq_id) and uuid.UUID(sent["MessageId"])
    assert record.value() == body.encode() and record.key() == b"cart-7"
    headers = dict(record.headers())
    assert headers["trace"] == "abc-123 ✓".encode()
    assert headers["price"] == b"12.50" and headers["blob"] == b"\x00\xffraw"
    assert headers["sqs-aws-trace-header"] == b"Root=1-5759e988-bd86"
    audited = manage(
        "shell", "-c",
        "import json; from kmqadmin.console.models import AuditEntry as A;"
        f"print(json.dumps(A.objects.get(action='sqs.SendMessage', target='{name}').after))",
        **web.settings,
    )  # fmt: skip
    after = json.loads(audited.stdout.splitlines()[-1])
    assert after["messages"] == {sent["MessageId"]: kmq_id}  # a client's MessageId found
    assert headers["sqs-sender-id"] == web.keys["worker"]["AWS_ACCESS_KEY_ID"].encode()
    assert json.loads(headers["sqs-attribute-types"]) == {
        "trace": "String",
        "price": "Number.float",
        "blob": "Binary",
    }


def test_a_batch_answers_each_entry_and_sends_only_the_good_ones(
    web: Web, kafka: EmbeddedBroker, protocol: str
) -> None:
    name, url = queue(web, protocol, MaximumMessageSize="1024")
    entries = [{"Id": f"ok-{i}", "MessageBody": f"m{i}"} for i in range(3)]
    entries += [
        {"Id": "bad-chars", "MessageBody": "nul \x00 inside"},
        {"Id": "too-big", "MessageBody": "x" * 1025},
        {"Id": "bad-attr", "MessageBody": "m", "MessageAttributes": {"AWS.x": ATTRIBUTES["trace"]}},
        {  # posing as the header a redelivery counts by
            "Id": "kmq-attr",
            "MessageBody": "m",
            "MessageAttributes": {"kmq-redelivery-count": ATTRIBUTES["trace"]},
        },
        {
            "Id": "ctl-attr",
            "MessageBody": "m",
            "MessageAttributes": {"t": {"DataType": "String", "StringValue": "a\x01"}},
        },
    ]
    answer = sqs(web, "worker", protocol).send_message_batch(QueueUrl=url, Entries=entries)
    assert sorted(e["Id"] for e in answer["Successful"]) == ["ok-0", "ok-1", "ok-2"]
    failed = {e["Id"]: (e["Code"], e["SenderFault"]) for e in answer["Failed"]}
    assert failed == {
        "bad-chars": ("InvalidMessageContents", True),
        "too-big": ("InvalidParameterValue", True),
        "bad-attr": ("InvalidParameterValue", True),  # SQS's code for a bad name
        "kmq-attr": ("InvalidParameterValue", True),
        "ctl-attr": ("InvalidParameterValue", True),
    }
    sent = records(kafka, name, 3)
    assert sorted(r.value() for r in sent) == [b"m0", b"m1", b"m2"]
    ids = {e["MessageId"] for e in answer["Successful"]}
    assert ids == {message_id(h.message_id(name, r.partition(), r.offset())) for r in sent}


def test_a_batch_sqs_refuses_whole_sends_nothing(
    web: Web, kafka: EmbeddedBroker, protocol: str
) -> None:
    name, url = queue(web, protocol)
    client = sqs(web, "worker", protocol)
    eleven = [{"Id": f"e{i}", "MessageBody": "m"} for i in range(11)]
    twins = [{"Id": "same", "MessageBody": "m"}, {"Id": "same", "MessageBody": "m"}]
    bad_id = [{"Id": "has space", "MessageBody": "m"}]
    for entries, code in [
        (eleven, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"),
        (twins, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"),
        (bad_id, "AWS.SimpleQueueService.InvalidBatchEntryId"),
    ]:
        refused = error_of(lambda e=entries: client.send_message_batch(QueueUrl=url, Entries=e))
        assert refused == (code, 400)
    refused = error_of(lambda: client.send_message(QueueUrl=url, MessageBody="m", DelaySeconds=901))
    assert refused == ("InvalidParameterValue", 400)
    whole = [{"Id": f"big{i}", "MessageBody": "x" * 300_000} for i in range(4)]
    refused = error_of(lambda: client.send_message_batch(QueueUrl=url, Entries=whole))
    assert refused == ("AWS.SimpleQueueService.BatchRequestTooLong", 400)
    viewer = sqs(web, "watcher", protocol)
    assert error_of(lambda: viewer.send_message(QueueUrl=url, MessageBody="m")) == (
        "AccessDenied",
        403,
    )
    assert records(kafka, name, 0) == []


def test_a_delayed_message_comes_onto_the_queue_when_due_through_its_scheduler(
    web: Web, kafka: EmbeddedBroker, protocol: str
) -> None:
    name, url = queue(web, protocol)
    client = sqs(web, "worker", protocol)
    sent_at = time.time()
    delayed = client.send_message(
        QueueUrl=url, MessageBody="later", DelaySeconds=2, MessageAttributes=ATTRIBUTES
    )
    now = client.send_message(QueueUrl=url, MessageBody="now")
    [first] = records(kafka, name, 1)
    assert first.value() == b"now"
    assert now["MessageId"] == message_id(h.message_id(name, first.partition(), first.offset()))
    assert _delayed(client, url) == "1"
    # The queue's scheduler, as a worker runs it (workers/services.py).
    config = QueueConfig(kafka.bootstrap_servers, name, f"{name}-workers", delayed_sends=True)
    scheduler = Scheduler(config.scheduler_config())
    scheduler.start()
    try:
        both = records(kafka, name, 2)
        wait_for(lambda: _delayed(client, url) == "0", 30, "the schedule gone once fired", 0.2)
    finally:
        scheduler.stop()
    [fired] = [r for r in both if r.value() == b"later"]
    headers = dict(fired.headers())
    assert headers["sqs-message-id"].decode() == delayed["MessageId"]
    assert headers["trace"] == "abc-123 ✓".encode()
    assert fired.timestamp()[1] / 1000 >= sent_at + 2


def _delayed(client, url: str) -> str:
    name = "ApproximateNumberOfMessagesDelayed"
    return client.get_queue_attributes(QueueUrl=url, AttributeNames=[name])["Attributes"][name]
