"""Queues through the SQS endpoint, by boto3 in both protocols against the
real web process and broker: made, found, listed, configured, tagged and
deleted as SQS does it, each a registered queue with its Kafka topics."""

import json
import uuid

import pytest
from confluent_kafka.admin import AdminClient

from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueConfig
from tests.process import manage, wait_for
from tests.queue_helpers import send
from tests.sqs.clients import PROTOCOLS, Web, error_of, sqs

pytestmark = pytest.mark.parametrize("protocol", PROTOCOLS)


def unique(stem: str) -> str:
    return f"{stem}-{uuid.uuid4().hex[:8]}"


def arn(name: str) -> str:
    return f"arn:aws:sqs:us-east-1:000000000000:{name}"


def topics(kafka: EmbeddedBroker) -> set[str]:
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    return set(admin.list_topics(timeout=10).topics)


def test_create_queue_registers_it_with_its_topics_and_is_idempotent(
    web: Web, kafka: EmbeddedBroker, protocol: str
) -> None:
    boss, name = sqs(web, "boss", protocol), unique("made")
    url = boss.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "45"})["QueueUrl"]
    assert url == f"{web.base}/{name}"
    assert {name, f"{name}__markers", f"{name}__undelivered"} <= topics(kafka)
    # Again, as Celery does on every start: the same answer, even for a viewer.
    again = sqs(web, "watcher", protocol).create_queue(
        QueueName=name, Attributes={"VisibilityTimeout": "45"}
    )
    assert again["QueueUrl"] == url
    assert sqs(web, protocol=protocol).get_queue_url(QueueName=name)["QueueUrl"] == url
    different = {"VisibilityTimeout": "30"}
    code = error_of(lambda: boss.create_queue(QueueName=name, Attributes=different))
    assert code == ("QueueAlreadyExists", 400)
    audited = manage(
        "shell", "-c",
        "from kmqadmin.console.models import AuditEntry as A;"
        f"e = A.objects.get(action='sqs.CreateQueue', target='{name}');"
        "print(e.username, e.status, e.after['key'], e.after['topics created'])",
        **web.settings,
    )  # fmt: skip
    username, state, key, created = audited.stdout.splitlines()[-1].split(maxsplit=3)
    assert (username, state, key) == ("boss", "done", web.keys["boss"]["AWS_ACCESS_KEY_ID"])
    assert name in created


def test_only_an_admin_makes_a_queue(web: Web, kafka: EmbeddedBroker, protocol: str) -> None:
    name = unique("refused")
    for user in ("watcher", "worker"):
        refused = error_of(lambda u=user: sqs(web, u, protocol).create_queue(QueueName=name))
        assert refused == ("AccessDenied", 403)
    assert name not in topics(kafka)
    missing = error_of(lambda: sqs(web, protocol=protocol).get_queue_url(QueueName=name))
    assert missing == ("AWS.SimpleQueueService.NonExistentQueue", 400)


def test_names_sqs_refuses_are_refused(web: Web, protocol: str) -> None:
    boss = sqs(web, "boss", protocol)
    for name in ("has.dot", "x" * 81, "jobs.fifo"):
        refused = error_of(lambda n=name: boss.create_queue(QueueName=n))
        assert refused == ("InvalidParameterValue", 400), name


def test_attributes_are_the_queues_settings_and_its_counts(
    web: Web, kafka: EmbeddedBroker, protocol: str
) -> None:
    boss, name, dlq = sqs(web, "boss", protocol), unique("attrs"), unique("attrs-dlq")
    dlq_arn = f"arn:aws:sqs:eu-west-3:000000000000:{dlq}"
    boss.create_queue(QueueName=dlq)
    policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "5"})
    url = boss.create_queue(
        QueueName=name,
        Attributes={"VisibilityTimeout": "45", "RedrivePolicy": policy, "DelaySeconds": "3"},
    )["QueueUrl"]
    send(QueueConfig(bootstrap_servers=kafka.bootstrap_servers, topic=name, group_id="x"), 3)
    got = sqs(web, protocol=protocol).get_queue_attributes(QueueUrl=url, AttributeNames=["All"])
    attributes = got["Attributes"]
    assert attributes["VisibilityTimeout"] == "45"
    assert attributes["DelaySeconds"] == "3"
    assert attributes["QueueArn"].endswith(f":000000000000:{name}")
    assert json.loads(attributes["RedrivePolicy"]) == {
        "deadLetterTargetArn": f"arn:aws:sqs:us-east-1:000000000000:{dlq}",
        "maxReceiveCount": 5,
    }
    assert attributes["ApproximateNumberOfMessages"] == "3"
    assert attributes["ApproximateNumberOfMessagesNotVisible"] == "0"
    one = boss.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])
    assert one["Attributes"] == {"VisibilityTimeout": "45"}
    sources = boss.list_dead_letter_source_queues(QueueUrl=f"{web.base}/{dlq}")
    assert sources["queueUrls"] == [url]


def test_set_queue_attributes_changes_them_and_refuses_nonsense(web: Web, protocol: str) -> None:
    boss, name = sqs(web, "boss", protocol), unique("set")
    url = boss.create_queue(QueueName=name)["QueueUrl"]
    boss.set_queue_attributes(
        QueueUrl=url, Attributes={"VisibilityTimeout": "90", "ReceiveMessageWaitTimeSeconds": "20"}
    )
    got = boss.get_queue_attributes(
        QueueUrl=url, AttributeNames=["VisibilityTimeout", "ReceiveMessageWaitTimeSeconds"]
    )
    assert got["Attributes"] == {"VisibilityTimeout": "90", "ReceiveMessageWaitTimeSeconds": "20"}
    refusals = {
        "VisibilityTimeout": ("abc", "InvalidAttributeValue"),
        "DelaySeconds": ("901", "InvalidAttributeValue"),
        "FifoQueue": ("true", "InvalidAttributeValue"),
        "RedrivePolicy": ("{not json", "InvalidAttributeValue"),
        "Colour": ("blue", "InvalidAttributeName"),
        "Policy": ('{"Statement": []}', "InvalidAttributeValue"),  # SQS's, not offered
        "KmsMasterKeyId": ("alias/aws/sqs", "InvalidAttributeValue"),
        "VisibilityTimeout ": ("5", "InvalidAttributeName"),
    }
    for attribute, (value, code) in refusals.items():
        refused = error_of(
            lambda a=attribute, v=value: boss.set_queue_attributes(QueueUrl=url, Attributes={a: v})
        )
        assert refused == (code, 400), attribute
    nowhere = json.dumps({"deadLetterTargetArn": f"{arn(name)}-none", "maxReceiveCount": 2})
    refused = error_of(
        lambda: boss.set_queue_attributes(QueueUrl=url, Attributes={"RedrivePolicy": nowhere})
    )
    assert refused == ("InvalidParameterValue", 400)  # SQS's: the target does not exist
    # Setting SQS's unoffered attributes empty changes nothing; reading them answers nothing.
    boss.set_queue_attributes(QueueUrl=url, Attributes={"Policy": "", "RedrivePolicy": ""})
    assert "Attributes" not in boss.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])
    policy = boss.get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"])
    assert json.loads(policy["Attributes"]["RedrivePolicy"]) == {
        "deadLetterTargetArn": arn(f"{name}__undelivered"),
        "maxReceiveCount": 4,  # the defaults back: a kmqadmin queue always dead-letters
    }
    as_operator = sqs(web, "worker", protocol)
    refused = error_of(
        lambda: as_operator.set_queue_attributes(QueueUrl=url, Attributes={"DelaySeconds": "1"})
    )
    assert refused == ("AccessDenied", 403)
    unchanged = boss.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])
    assert unchanged["Attributes"]["VisibilityTimeout"] == "90"


def test_tags(web: Web, protocol: str) -> None:
    boss, name = sqs(web, "boss", protocol), unique("tags")
    url = boss.create_queue(QueueName=name, tags={"team": "billing"})["QueueUrl"]
    boss.tag_queue(QueueUrl=url, Tags={"env": "prod", "team": "payments"})
    assert boss.list_queue_tags(QueueUrl=url)["Tags"] == {"env": "prod", "team": "payments"}
    boss.untag_queue(QueueUrl=url, TagKeys=["env"])
    assert error_of(lambda: boss.untag_queue(QueueUrl=url, TagKeys=[])) == (
        "InvalidParameterValue",
        400,
    )
    assert error_of(lambda: boss.tag_queue(QueueUrl=url, Tags={})) == ("MissingParameter", 400)
    assert sqs(web, protocol=protocol).list_queue_tags(QueueUrl=url)["Tags"] == {"team": "payments"}


def test_list_queues_pages_by_name(web: Web, protocol: str) -> None:
    boss, stem = sqs(web, "boss", protocol), unique("page")
    urls = [boss.create_queue(QueueName=f"{stem}-{i}")["QueueUrl"] for i in range(3)]
    first = boss.list_queues(QueueNamePrefix=stem, MaxResults=2)
    assert first["QueueUrls"] == urls[:2]
    rest = boss.list_queues(QueueNamePrefix=stem, MaxResults=2, NextToken=first["NextToken"])
    assert rest["QueueUrls"] == urls[2:] and "NextToken" not in rest


def test_delete_queue_removes_what_sqs_made_and_keeps_the_name_a_minute(
    web: Web, kafka: EmbeddedBroker, protocol: str
) -> None:
    boss, name = sqs(web, "boss", protocol), unique("gone")
    url = boss.create_queue(QueueName=name)["QueueUrl"]
    assert error_of(lambda: sqs(web, "worker", protocol).delete_queue(QueueUrl=url)) == (
        "AccessDenied",
        403,
    )
    boss.delete_queue(QueueUrl=url)
    missing = error_of(lambda: boss.get_queue_url(QueueName=name))
    assert missing == ("AWS.SimpleQueueService.NonExistentQueue", 400)
    wait_for(lambda: not {name, f"{name}__markers"} & topics(kafka), 30, "the topics deleted")
    again = error_of(lambda: boss.create_queue(QueueName=name))
    assert again == ("AWS.SimpleQueueService.QueueDeletedRecently", 400)
