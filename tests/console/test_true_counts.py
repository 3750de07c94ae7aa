"""Counts of records, not offsets: a queue whose topics hold transaction
markers and aborted records shows exactly the letters and the waiting
messages it has, on the dashboard, the queue page's live view, the API and
/metrics, on both backends."""

import re
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from prometheus_client.parser import text_string_to_metric_families

from kmqadmin.console.live.consumers import dashboard_rows, in_flight_table
from kmqadmin.console.models import Cluster, Queue
from kmqadmin.console.services.roles import Role
from kmqadmin.kafka.admin.topics import topic_partitions
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueClient, QueueConfig, RedeliveryTracker
from tests.console.conftest import client_as
from tests.kafka_helpers import read_all
from tests.process import wait_for
from tests.queue_helpers import poll_until, send

pytestmark = pytest.mark.django_db

LETTERS = 4  # each dead-lettered on its own: one transaction, one marker each (kmq)
WAITING = 5  # each committed in its own transaction by another producer
ABORTED = 3  # written, then aborted: in the log, never a message


@pytest.fixture(params=["kmq", "share"])
def counted(request: pytest.FixtureRequest, kafka: EmbeddedBroker, topic: str) -> Iterator[Queue]:
    cluster = Cluster.objects.create(name="local", bootstrap_servers=kafka.bootstrap_servers)
    queue = Queue.objects.create(
        cluster=cluster,
        topic=topic,
        group_id=f"{topic}-workers",
        backend=request.param,
        message_timeout_ms=60_000,
        partitions=1,
    )
    config = queue.config()
    config.ensure_topics(partitions=1)
    if queue.backend == "share":
        yield queue
        return
    tracker = RedeliveryTracker(config)
    tracker.start()
    yield queue
    tracker.stop()


def test_dead_letters_and_depth_count_records_on_every_view(counted: Queue) -> None:
    config = counted.config()
    _dead_letter_one_at_a_time(config)
    _write_in_transactions(config)
    if counted.backend == "kmq":  # offsets alone would say twice as many
        assert _offsets(config, config.dlq_topic) == 2 * LETTERS
    assert _offsets(config, config.topic) > LETTERS + WAITING + ABORTED

    api = client_as("viewer")
    stats = wait_for(
        lambda: (
            (s := api.get(f"/api/v1/queues/{counted.topic}/stats").json())["depth"] == WAITING and s
        ),
        30,
        f"a depth of {WAITING}",
        evidence=lambda: str(api.get(f"/api/v1/queues/{counted.topic}/stats").json()),
    )
    assert stats["dead_letters"] == LETTERS
    assert _gauges(dashboard_rows()) == {"depth": str(WAITING), "dead_letters": str(LETTERS)}
    if counted.backend == "kmq":  # a share queue's page has no in-flight view
        page = in_flight_table(counted, Role.VIEWER)
        assert _gauges(page) == {"depth": str(WAITING), "dead_letters": str(LETTERS)}
    assert _metrics(counted.topic) == {
        "kmqadmin_queue_depth": WAITING,
        "kmqadmin_queue_dead_letters": LETTERS,
    }


def _dead_letter_one_at_a_time(config: QueueConfig) -> None:
    send(config, LETTERS)
    with QueueClient(config) as worker:
        for n, message in enumerate(poll_until(worker, LETTERS), start=1):
            worker.reject(message, reason="poison")
            worker.flush()
            wait_for(lambda n=n: len(read_all(config, config.dlq_topic, 1)) == n, 30, f"letter {n}")


def _write_in_transactions(config: QueueConfig) -> None:
    """As a Java service writing in transactions would: a marker after each
    commit, and records that an abort leaves in the log."""
    producer = Producer(
        {
            "bootstrap.servers": config.bootstrap_servers,
            "transactional.id": f"other-{uuid.uuid4().hex}",
        }
    )
    producer.init_transactions(30)
    for i in range(WAITING):
        producer.begin_transaction()
        producer.produce(config.topic, f"waiting {i}".encode(), partition=0)
        producer.commit_transaction(30)
    producer.begin_transaction()
    for i in range(ABORTED):
        producer.produce(config.topic, f"aborted {i}".encode(), partition=0)
    producer.flush(30)
    producer.abort_transaction(30)


def _offsets(config: QueueConfig, topic: str) -> int:
    """What the gauges used to say: high minus low watermark, summed."""
    reader = Consumer({"bootstrap.servers": config.bootstrap_servers, "group.id": "offsets"})
    try:
        total = 0
        for p in topic_partitions(reader, topic):
            low, high = reader.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            total += high - low
        return total
    finally:
        reader.close()


def _gauges(html: str) -> dict[str, str]:
    """The depth and DLQ size a rendered view shows."""
    found = dict(re.findall(r'data-gauge="(\w+)">\s*(\d+)\s*<', html))
    return {k: v for k, v in found.items() if k in ("depth", "dead_letters")}


GAUGES = ("kmqadmin_queue_depth", "kmqadmin_queue_dead_letters")


def _metrics(topic: str) -> dict[str, float]:
    text = client_as(None).get("/metrics").content.decode()
    return {
        s.name: s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.labels.get("queue") == topic and s.name in GAUGES
    }
