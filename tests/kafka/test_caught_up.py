"""caught_up: at the end of every partition, empty ones included."""

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from kmqadmin.kafka.admin.caught_up import caught_up
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.kmq import QueueConfig
from tests.process import wait_for
from tests.queue_helpers import send


def test_one_record_in_three_partitions_is_caught_up_once_read(queue: QueueConfig) -> None:
    send(queue, 1, partition=1)  # partitions 0 and 2 stay empty: no position ever
    consumer = Consumer(consumer_config(queue.bootstrap_servers, "caught-up"))
    partitions = [TopicPartition(queue.topic, p, OFFSET_BEGINNING) for p in range(3)]
    try:
        consumer.assign(partitions)
        assert not caught_up(consumer, partitions)  # nothing fetched yet
        read: list = []

        def done() -> bool:
            if caught_up(consumer, partitions):
                return True
            read.extend(r for r in consumer.consume(10, 0.1) if r.error() is None)
            return False

        wait_for(done, 20, "the end of every partition")
        assert [r.value() for r in read] == [b"m0"]
    finally:
        consumer.close()
