"""A compact start range the broker refuses: the client reads its partition
again from that batch, and commits it only once its start markers are
written, so no message ends up committed without the tracker knowing it
was handed out. Against the real broker, made to refuse by a markers topic
whose max.message.bytes no record fits."""

import logging

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)

from kmqadmin.kmq import QueueClient, QueueConfig, RedeliveryTracker
from kmqadmin.kmq.config import MarkerFormat
from tests.process import wait_for
from tests.queue_helpers import poll_until, send


@pytest.fixture
def marker_format() -> MarkerFormat:
    return "compact"  # kmq's format waits for its starts before handing out


def set_markers_max_bytes(queue: QueueConfig, value: str) -> None:
    entry = ConfigEntry("max.message.bytes", value, incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource(ResourceType.TOPIC, queue.markers_topic, incremental_configs=[entry])
    admin = AdminClient({"bootstrap.servers": queue.bootstrap_servers})
    admin.incremental_alter_configs([resource])[resource].result(30)


def committed(client: QueueClient, queue: QueueConfig) -> int:
    [tp] = client._consumer.committed([TopicPartition(queue.topic, 0)], timeout=10)
    return tp.offset


def test_a_refused_start_range_is_read_again_and_committed_once_written(
    queue: QueueConfig, tracker: RedeliveryTracker, caplog: pytest.LogCaptureFixture
) -> None:
    send(queue, 20, partition=0)
    set_markers_max_bytes(queue, "10")
    with caplog.at_level(logging.WARNING), QueueClient(queue) as client:
        first = poll_until(client, 20)
        again = poll_until(client, 20, timeout=30)  # its starts refused: read again
        assert [m.offset for m in again] == [m.offset for m in first]
        assert {m.delivery_count for m in again} == {1}
        assert "start markers not written" in caplog.text
        assert committed(client, queue) < 0  # nothing committed past unwritten starts

        set_markers_max_bytes(queue, "1048588")
        later: list = []

        def written_and_committed() -> bool:
            later.extend(client.poll(20, 0.2))
            return committed(client, queue) == 20

        wait_for(written_and_committed, 30, "the batch, its starts written, committed")
        client.ack_all(again + later)  # whichever delivery's starts were written
        client.flush()
    wait_for(lambda: tracker.stats().in_flight == 0, 10, "the acked batch closed")
    assert tracker.stats().redelivered == 0
