"""What any producer can write must not break a page: ids holding a newline,
empty or undecodable, epochs past the year 9999. Each record is written
straight to the real broker, as a hostile producer would."""

import re

import pytest
from confluent_kafka import Producer

from kmqadmin.console.models import Cluster, Queue, ScheduleTopic
from kmqadmin.console.services.clusters import clients
from kmqadmin.kmq import QueueConfig
from kmqadmin.kmq import headers as h
from kmqadmin.scheduler import SchedulerConfig, wire
from tests.console.conftest import client_as
from tests.process import wait_for

pytestmark = pytest.mark.django_db


def produce(bootstrap: str, topic: str, records: list[dict]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for record in records:
        producer.produce(topic, partition=0, **record)
    assert producer.flush(10) == 0


def test_a_letter_whose_kmq_id_holds_a_newline_is_shown(
    registered: Queue, queue: QueueConfig
) -> None:
    produce(
        queue.bootstrap_servers,
        queue.dlq_topic,
        [{"value": b"v", "headers": [(h.MESSAGE_ID, b"a\nb"), (h.DLQ_REASON, b"rejected")]}],
    )
    viewer = client_as("viewer")
    page = wait_for(
        lambda: (
            (r := viewer.get(f"/queues/{queue.topic}/dlq/")).status_code == 200
            and b"rejected" in r.content
            and r
        ),
        20,
        "the letter on the DLQ page",
    )
    assert b"a\nb" in page.content
    assert viewer.get(f"/queues/{queue.topic}/messages/a%0Ab").status_code == 404


def test_hostile_schedule_records_do_not_break_the_schedules_page(
    schedules: SchedulerConfig, target: str
) -> None:
    cluster = Cluster.objects.create(name="local", bootstrap_servers=schedules.bootstrap_servers)
    ScheduleTopic.objects.create(cluster=cluster, topic=schedules.topic, group_id="g")

    def schedule(key: bytes, epoch: bytes = b"4102444800", to: bytes = target.encode()) -> dict:
        headers = [(wire.EPOCH, epoch), (wire.TARGET_TOPIC, to)]
        return {"key": key, "value": b"v", "headers": headers}

    produce(
        schedules.bootstrap_servers,
        schedules.topic,
        [
            schedule(b"line\nbreak"),
            schedule(b""),
            schedule(b"\xff"),
            schedule(b"\xfe"),  # due with \xff, and reads as the same U+FFFD
            schedule(b"far", epoch=b"1e15"),
            schedule(b"past", epoch=b"-1e306"),
            schedule(b"nul", to=b"a\x00b"),
            schedule(b"last", epoch=b"253402300799"),
        ],
    )
    operator = client_as("operator")
    url = f"/schedules/{schedules.topic}/"

    def listed():
        answer = operator.get(url)
        assert answer.status_code == 200
        return b"last" in answer.content and answer

    page = wait_for(listed, 20, "the schedules listed").content.decode()
    # The rows' ids, not the page: a page's random CSRF token may hold "far".
    ids = re.findall(r'<tr data-schedule="([^"]*)">', page)
    assert len(ids) == 5
    assert "line\nbreak" in ids and "far" not in ids and "nul" not in ids
    assert clients.upcoming(schedules_config(schedules)).skipped == 3
    form = {"id": "x", "at": "9999-12-31T23:59:59-14:00", "target_topic": target}
    refused = operator.post(f"/schedules/{schedules.topic}/new", form)
    assert refused.status_code == 400 and b"after 9999-12-31" in refused.content


def schedules_config(schedules: SchedulerConfig) -> SchedulerConfig:
    """The configuration the console keeps its view under."""
    return ScheduleTopic.objects.select_related("cluster").get(topic=schedules.topic).config()


def test_offsets_and_partitions_past_kafkas_bounds_are_a_4xx(registered: Queue) -> None:
    topic, big = registered.topic, 2**63
    viewer, operator = client_as("viewer"), client_as("operator")
    assert viewer.get(f"/queues/{topic}/dlq/", {"start": big}).status_code == 200  # the form says
    assert b"less than or equal" in viewer.get(f"/queues/{topic}/dlq/", {"start": big}).content
    assert viewer.get(f"/api/v1/queues/{topic}/dlq/", {"from": big}).status_code == 400
    assert viewer.get(f"/api/v1/queues/{topic}/dlq/", {"partition": 2**31}).status_code == 400
    assert viewer.get(f"/api/v1/queues/{topic}/in-flight/", {"after": "²:1"}).status_code == 400
    assert viewer.get(f"/queues/{topic}/messages/{topic}/0/{big}").status_code == 404
    assert operator.post(f"/queues/{topic}/dlq/0/{big}/redrive").status_code == 400
    assert operator.post(f"/queues/{topic}/dlq/{2**31}/0/redrive").status_code == 400
