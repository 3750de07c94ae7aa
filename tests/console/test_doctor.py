"""`kmq doctor` finds what is wrong and says how to fix it."""

import io
import time

import pytest
from django.core.management import CommandError, call_command

from kmqadmin.console.cli.doctor import KAFKA_WITHIN_S, check_kafka
from kmqadmin.console.models import Cluster, Queue
from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.embedded.broker import EmbeddedBroker, free_port

pytestmark = [pytest.mark.django_db, pytest.mark.production]


def doctor(*args: str) -> tuple[str, bool]:
    out = io.StringIO()
    try:
        call_command("kmq", "doctor", *args, stdout=out)
    except CommandError:
        return out.getvalue(), False
    return out.getvalue(), True


def register(kafka: EmbeddedBroker, topic: str) -> Queue:
    cluster = Cluster.objects.create(name="test", bootstrap_servers=kafka.bootstrap_servers)
    return Queue.objects.create(cluster=cluster, topic=topic, group_id="g")


def test_healthy_queue_passes_every_check(kafka: EmbeddedBroker, topic: str, settings) -> None:
    settings.KAFKA_BOOTSTRAP_SERVERS = kafka.bootstrap_servers
    queue = register(kafka, topic)
    ensure_topics(kafka.bootstrap_servers, {topic: 3, queue.markers_topic: 3, queue.dlq_topic: 3})
    output, ok = doctor()
    assert ok, output
    assert "FAIL" not in output
    for name in ("database", "channels", "celery", "kafka", "partitions"):
        assert f"  ok  {name}" in output


def test_reports_missing_topic_and_partition_mismatch(
    kafka: EmbeddedBroker, topic: str, settings
) -> None:
    settings.KAFKA_BOOTSTRAP_SERVERS = kafka.bootstrap_servers
    queue = register(kafka, topic)
    ensure_topics(kafka.bootstrap_servers, {topic: 3, queue.markers_topic: 2})
    output, ok = doctor()
    assert not ok
    assert f"FAIL  topic        {topic}__undelivered is missing -> create it with 3" in output
    assert f"FAIL  partitions   {topic} has 3 partitions but {topic}__markers has 2" in output
    assert f"give {topic}__markers exactly 3 partitions" in output


def test_ad_hoc_topic_and_unreachable_broker(kafka: EmbeddedBroker, topic: str, settings) -> None:
    settings.KAFKA_BOOTSTRAP_SERVERS = f"127.0.0.1:{free_port()}"
    output, ok = doctor("--topic", topic)
    assert not ok
    assert "FAIL  kafka        cannot reach Kafka" in output
    assert "set KAFKA_BOOTSTRAP_SERVERS" in output
    assert "  ok  database" in output


def test_a_share_queue_needs_no_markers_and_fits_the_brokers_bounds(
    kafka: EmbeddedBroker, topic: str, settings
) -> None:
    settings.KAFKA_BOOTSTRAP_SERVERS = kafka.bootstrap_servers
    queue = register(kafka, topic)
    queue.backend = "share"
    queue.config().ensure_topics(partitions=3)
    queue.max_redeliveries = 4  # the broker's limit of 5 allows 3 at most
    queue.save()
    output, ok = doctor()
    assert not ok
    assert f"{topic}__markers" not in output
    assert f"  ok  topic        {topic}__counts (1 partitions)" in output
    assert "FAIL  share group  " in output and "group.share.delivery.count.limit" in output
    queue.max_redeliveries = 3
    queue.save()
    output, ok = doctor()
    assert ok, output
    assert "  ok  share group  g: delivery limit 5" in output


def test_a_stalled_broker_is_a_fail_line_within_the_bound(stalled: str) -> None:
    started = time.monotonic()
    [check] = check_kafka(stalled, [])
    took = time.monotonic() - started
    assert not check.ok and f"cannot reach Kafka at {stalled}" in check.detail
    assert took < KAFKA_WITHIN_S + 1  # the bound, and slack for a busy machine
