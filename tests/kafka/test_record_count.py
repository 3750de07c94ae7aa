"""RecordCount: committed records, not offsets, each read once."""

import uuid

from confluent_kafka import Consumer, Producer, TopicPartition

from kmqadmin.kafka.admin.record_count import RecordCount
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.kmq import QueueConfig
from tests.queue_helpers import send


def test_markers_and_aborted_records_are_not_counted_and_nothing_is_read_twice(
    queue: QueueConfig,
) -> None:
    send(queue, 3, partition=0)  # offsets 0-2, no transaction
    producer = Producer(
        {"bootstrap.servers": queue.bootstrap_servers, "transactional.id": uuid.uuid4().hex}
    )
    producer.init_transactions(30)
    _transaction(producer, queue.topic, 2, commit=True)  # 3-4, marker 5
    _transaction(producer, queue.topic, 4, commit=False)  # 6-9 aborted, marker 10
    consumer = Tallying(consumer_config(queue.bootstrap_servers, "count"))
    count = RecordCount(consumer, queue.topic)
    try:
        assert _end(consumer, queue.topic) == 11
        assert count.between({0: (0, 11)}) == 5
        assert count.between({0: (4, 11)}) == 1  # the start moved (a commit, retention)
        assert consumer.handed_out == 5
        _transaction(producer, queue.topic, 1, commit=True)  # 11, marker 12
        assert count.between({0: (4, 13)}) == 2
        assert consumer.handed_out == 6  # only the new record was read
        assert count.between({0: (0, 13)}) == 6  # moved back: read again
        assert consumer.handed_out == 12
    finally:
        consumer.close()


class Tallying(Consumer):
    """A real consumer that counts the records it hands out."""

    handed_out = 0

    def consume(self, *args: object, **kwargs: object) -> list:
        records = super().consume(*args, **kwargs)
        self.handed_out += sum(r.error() is None for r in records)
        return records


def _transaction(producer: Producer, topic: str, n: int, commit: bool) -> None:
    producer.begin_transaction()
    for i in range(n):
        producer.produce(topic, b"t%d" % i, partition=0)
    producer.flush(30)
    if commit:
        producer.commit_transaction(30)
    else:
        producer.abort_transaction(30)


def _end(consumer: Consumer, topic: str) -> int:
    return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
