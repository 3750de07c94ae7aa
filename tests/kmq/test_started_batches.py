"""StartedBatches: what a compact-format client may commit, from its start
ranges' delivery reports (pure logic: the reports are called as librdkafka
calls them)."""

from confluent_kafka import KafkaError

from kmqadmin.kmq.client.started_batches import StartedBatches


def test_a_batch_is_committed_once_every_start_of_it_and_before_it_is_written() -> None:
    started = StartedBatches()
    first = started.add(0, 100, 150, records=2)
    second = started.add(0, 150, 200, records=1)
    other = started.add(1, 10, 20, records=1)
    second(None, None)  # acknowledged out of order: must wait for the first
    other(None, None)
    ready = started.ready()
    assert (ready.commits, ready.rewinds) == ({1: 20}, {})
    first(None, None)
    assert started.ready().commits == {}  # one start of two written: not yet
    first(None, None)
    assert started.ready().commits == {0: 200}
    assert started.pending() == 0


def test_a_failed_start_rewinds_its_partition_to_that_batch_and_drops_the_later() -> None:
    started = StartedBatches()
    ok = started.add(0, 0, 10, records=1)
    failed = started.add(0, 10, 20, records=1)
    later = started.add(0, 20, 30, records=1)
    ok(None, None)
    failed(KafkaError(KafkaError._MSG_TIMED_OUT), None)
    later(None, None)
    ready = started.ready()
    assert ready.commits == {0: 10}
    assert list(ready.rewinds) == [0] and ready.rewinds[0][0] == 10
    assert started.pending() == 0  # the later batch is read and started again


def test_forgotten_partitions_commit_nothing() -> None:
    started = StartedBatches()
    report = started.add(3, 0, 5, records=1)
    started.forget([3])
    report(None, None)  # a report arriving after the revoke
    assert started.ready().commits == {} and started.pending() == 0
