"""What one poll batch promises message by message, end to end on the real
broker: in the compact format the batch is one start range, and every
message of it is still acked, extended, released and redelivered alone.
Run on both formats (conftest.py), so kmq's per-message records are held
to the same answers."""

import dataclasses
import multiprocessing

from kmqadmin.kmq import MarkerWriter, QueueClient, QueueConfig, RedeliveryTracker
from kmqadmin.kmq.message import Message
from tests.process import wait_for
from tests.queue_helpers import poll_until, send


def patient(queue: QueueConfig) -> QueueConfig:
    """A timeout well past a process's start or a group's rebalance, so what
    the test does next happens before anything falls due."""
    return dataclasses.replace(queue, message_timeout_ms=20_000)


def one_partition_batch(queue: QueueConfig, client: QueueClient, n: int) -> list[Message]:
    send(queue, n, partition=0)
    batch = poll_until(client, n)
    assert {m.partition for m in batch} == {0}
    return batch


def test_three_of_500_acked_and_the_other_497_come_back_once(
    queue: QueueConfig, tracker: RedeliveryTracker
) -> None:
    with QueueClient(queue) as client:
        batch = one_partition_batch(queue, client, 500)
        acked = batch[7], batch[250], batch[499]
        for message in acked:
            client.ack(message)
        copies = poll_until(client, 497, timeout=30)
        client.ack_all(copies)
        client.flush()
        assert client.poll(500, 2.5) == []  # past the 1 s timeout: nothing else
    assert sorted(m.id for m in copies) == sorted(m.id for m in batch if m not in acked)
    assert {m.delivery_count for m in copies} == {2}
    wait_for(lambda: tracker.stats().in_flight == 0, 10, "every delivery closed")


def test_one_released_and_one_extended_inside_a_batch(
    queue: QueueConfig, tracker: RedeliveryTracker
) -> None:
    with QueueClient(queue) as client:
        batch = one_partition_batch(queue, client, 50)
        released, extended = batch[10], batch[11]
        client.ack_all(m for m in batch if m not in (released, extended))
        client.extend(extended, ms=4000)
        client.release(released)
        [again] = poll_until(client, 1, timeout=10)
        assert (again.id, again.delivery_count) == (released.id, 2)
        client.ack(again)
        assert client.poll(50, 2.0) == []  # the 1 s timeout passed: extended holds
        [later] = poll_until(client, 1, timeout=10)
        assert (later.id, later.delivery_count) == (extended.id, 2)
        client.ack(later)
    wait_for(lambda: tracker.stats().in_flight == 0, 10, "every delivery closed")
    # Counted once the tracker collects its commit, maybe after the copy is read.
    wait_for(lambda: tracker.stats().redelivered >= 2, 10, "the tracker's count")
    assert tracker.stats().redelivered == 2


def _ack_elsewhere(config: QueueConfig, deliveries: list[tuple[int, int]]) -> None:
    writer = MarkerWriter(config)
    try:
        writer.ack_all(deliveries)
    finally:
        writer.close()


def test_a_batch_acked_half_by_its_worker_and_half_by_another_process(
    queue: QueueConfig, tracker: RedeliveryTracker
) -> None:
    """As a console operator acks what a worker holds: any process can end a
    delivery, and a range is closed offset by offset."""
    with QueueClient(patient(queue)) as client:
        batch = one_partition_batch(queue, client, 100)
        client.ack_all(batch[::2])
        client.flush()
        elsewhere = [(m.partition, m.offset) for m in batch[1::2]]
        other = multiprocessing.get_context("spawn").Process(
            target=_ack_elsewhere, args=(queue, elsewhere)
        )
        other.start()
        other.join(60)
        assert other.exitcode == 0
        wait_for(lambda: tracker.stats().in_flight == 0, 10, "every delivery closed")
    assert tracker.stats().redelivered == 0


def test_a_batch_acked_after_a_rebalance_moved_the_group(
    queue: QueueConfig, tracker: RedeliveryTracker
) -> None:
    """A second worker joins while the first holds a batch: the first acks it
    afterwards, and neither worker sees any of it again."""
    with QueueClient(patient(queue)) as first:
        batch = one_partition_batch(queue, first, 100)
        with QueueClient(patient(queue)) as second:

            def both_assigned() -> bool:
                seen.extend(first.poll(100, 0.1) + second.poll(100, 0.1))
                return bool(first._consumer.assignment() and second._consumer.assignment())

            seen: list[Message] = []
            wait_for(both_assigned, 30, "the group to take the second worker in", every=0)
            first.ack_all(batch)
            first.flush()
            wait_for(lambda: tracker.stats().in_flight == 0, 10, "every delivery closed")
            seen.extend(first.poll(100, 1.0) + second.poll(100, 1.0))
        assert seen == []  # the first's offsets were committed as the group moved
    assert tracker.stats().redelivered == 0
