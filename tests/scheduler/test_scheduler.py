"""Scheduler behaviour against a real broker: fire, update, cancel, restart,
horizon, bad records, two instances."""

import dataclasses
import time
from datetime import UTC, datetime

import pytest
from confluent_kafka import KafkaException, Producer

from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.client.checked_producer import CheckedProducer
from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kafka.client.config import producer_config
from kmqadmin.scheduler import ScheduleClient, Scheduler, SchedulerConfig, UpcomingView, wire
from tests.process import wait_for
from tests.schedule_helpers import PARTITIONS, fired, fired_ids, in_seconds


def test_fires_on_time_with_etf1_headers_and_tombstones_the_schedule(
    schedules: SchedulerConfig, target: str, scheduler: Scheduler
) -> None:
    wait_for(lambda: scheduler.stats().partitions == (0, 1, 2), 30, "the assignment")
    with ScheduleClient(schedules) as client:
        # Due once the client is up, 2 s ahead: what is measured is the
        # scheduler's lateness, not the time a starved CPU takes to start a
        # producer and a fetch (which made "due" pass before it was read).
        at = {f"s{i}": in_seconds(2 + i * 0.05) for i in range(30)}
        for sid, when in at.items():
            client.schedule(
                sid,
                when,
                target,
                value=sid.encode(),
                target_key=b"k-" + sid.encode(),
                headers={"trace": "abc"},
            )
    records = wait_for(lambda: len(r := fired(schedules, target)) >= 30 and r, 30, "30 fires")
    lateness = []
    for record in records:
        headers = dict(record.headers())
        sid = headers[wire.FIRED_KEY].decode()
        assert record.value() == sid.encode() and record.key() == b"k-" + sid.encode()
        assert headers["trace"] == b"abc"
        assert headers[wire.FIRED_TOPIC] == schedules.topic.encode()
        assert wire.EPOCH not in headers and wire.TARGET_TOPIC not in headers
        lateness.append(record.timestamp()[1] - at[sid] * 1000)
    assert sorted(fired_ids(schedules, target).values()) == [1] * 30
    assert min(lateness) >= -5  # never early (5 ms of clock rounding)
    assert max(lateness) < 1000
    tombstones = [r for r in fired(schedules, schedules.topic) if r.value() is None]
    assert {r.key().decode() for r in tombstones} >= set(at)
    wait_for(lambda: scheduler.stats().fired == 30 and scheduler.stats().held == 0, 10, "stats")


def test_update_and_cancel_before_fire(
    schedules: SchedulerConfig, target: str, scheduler: Scheduler
) -> None:
    with ScheduleClient(schedules) as client:
        client.schedule("moved", in_seconds(1), target, value=b"v1")
        client.schedule("cancelled", in_seconds(1), target, value=b"never")
        client.schedule("late", in_seconds(3600), target, value=b"later")
        client.flush()
        client.schedule("moved", in_seconds(2.5), target, value=b"v2")
        client.cancel("cancelled")
    wait_for(lambda: fired_ids(schedules, target)["moved"], 30, "the moved schedule to fire")
    # Firing is in deadline order: the cancelled one, due 1.5 s before, had its turn.
    records = fired(schedules, target)
    assert [(dict(r.headers())[wire.FIRED_KEY], r.value()) for r in records] == [(b"moved", b"v2")]
    planned = scheduler.planned()
    assert len(planned) == 1 and planned[0].due_ms > now_ms() + 3_000_000


def test_restart_fires_missed_schedules_then_future_ones(
    schedules: SchedulerConfig, target: str
) -> None:
    """Written while no scheduler runs: the missed fire at startup, the future on time."""
    with ScheduleClient(schedules) as client:
        for i in range(20):
            client.schedule(f"missed{i}", datetime(2020, 1, 1, tzinfo=UTC), target, b"m")
        client.schedule("missed-but-cancelled", in_seconds(-60), target, b"x")
        client.cancel("missed-but-cancelled")
        future_at = in_seconds(10)
        client.schedule("future", future_at, target, b"f")
    scheduler = Scheduler(schedules)
    scheduler.start()
    try:
        wait_for(lambda: scheduler.stats().fired >= 20, 30, "missed schedules", every=0.02)
        (planned,) = scheduler.planned()
        assert abs(planned.due_ms - future_at * 1000) <= 1
        wait_for(lambda: scheduler.stats().fired == 21, 30, "the future schedule")
    finally:
        scheduler.stop()
    records = fired(schedules, target)
    assert fired_ids(schedules, target) == {"future": 1} | {f"missed{i}": 1 for i in range(20)}
    (future,) = [r for r in records if r.value() == b"f"]
    assert future.timestamp()[1] >= future_at * 1000 - 5
    assert all(r.timestamp()[1] < future_at * 1000 for r in records if r.value() == b"m")


def test_bad_schedule_records_are_counted_and_skipped(
    schedules: SchedulerConfig, target: str, scheduler: Scheduler
) -> None:
    producer = CheckedProducer(schedules.bootstrap_servers)
    due = wire.encode_epoch(now_ms())
    bad = [
        (b"no-epoch", [(wire.TARGET_TOPIC, target.encode())]),
        (b"bad-epoch", [(wire.EPOCH, b"soon"), (wire.TARGET_TOPIC, target.encode())]),
        (b"no-target", [(wire.EPOCH, due)]),
    ]
    # Apache Kafka refuses a keyless record on a compacted topic, so no
    # scheduler ever reads one: the broker validates the whole batch.
    producer.produce(schedules.topic, key=None, value=b"bad", headers=bad[0][1], partition=0)
    with pytest.raises(KafkaException, match="INVALID_RECORD"):
        producer.flush()
    for key, headers in bad:
        producer.produce(schedules.topic, key=key, value=b"bad", headers=headers, partition=0)
    producer.produce(
        schedules.topic,
        key=b"good",
        value=b"ok",
        headers=[(wire.EPOCH, due), (wire.TARGET_TOPIC, target.encode())],
        partition=0,
    )
    producer.flush()
    wait_for(lambda: fired_ids(schedules, target)["good"], 30, "the good schedule to fire")
    assert scheduler.stats().skipped == 3
    assert fired_ids(schedules, target) == {"good": 1}


def test_a_missing_target_topic_is_counted_not_fatal(
    schedules: SchedulerConfig, target: str, scheduler: Scheduler
) -> None:
    with ScheduleClient(schedules) as client:
        client.schedule("nowhere", in_seconds(0), "no-such-topic-anywhere", b"x")
        client.schedule("somewhere", in_seconds(0.5), target, b"y")
    wait_for(lambda: fired_ids(schedules, target)["somewhere"], 30, "the good schedule")
    # Counted once the producer gives up on the topic's metadata, which may
    # come after the good schedule fired on a busy machine.
    wait_for(lambda: scheduler.stats().undeliverable, 30, "the missing target counted")
    assert scheduler.stats().undeliverable == 1
    kept = [r for r in fired(schedules, schedules.topic) if r.key() == b"nowhere"]
    assert [r.value() for r in kept] == [b"x"]  # no tombstone: it fires once the topic exists


def test_a_target_outside_the_allowlist_is_counted_and_never_fired(
    schedules: SchedulerConfig, target: str
) -> None:
    """Written by a plain producer, as anyone with write access to the topic could."""
    elsewhere = f"{target}-other"
    ensure_topics(schedules.bootstrap_servers, {elsewhere: PARTITIONS})
    config = dataclasses.replace(schedules, allowed_targets=frozenset([target]))
    producer = CheckedProducer(schedules.bootstrap_servers)
    due = wire.encode_epoch(now_ms())
    for key, to in ((b"forbidden", elsewhere), (b"allowed", target)):
        headers = [(wire.EPOCH, due), (wire.TARGET_TOPIC, to.encode())]
        producer.produce(schedules.topic, key=key, value=b"v", headers=headers, partition=0)
    producer.flush()
    scheduler = Scheduler(config)
    scheduler.start()
    try:
        wait_for(lambda: fired_ids(schedules, target)["allowed"], 30, "the allowed schedule")
        wait_for(lambda: scheduler.stats().forbidden == 1, 10, "the forbidden one counted")
        assert scheduler.stats().fired == 1
    finally:
        scheduler.stop()
    assert fired(schedules, elsewhere) == []
    kept = [r for r in fired(schedules, schedules.topic) if r.key() == b"forbidden"]
    assert [r.value() for r in kept] == [b"v"]  # no tombstone: an operator sees and cancels it
    view = UpcomingView(config)
    try:
        wait_for(lambda: view.refresh() or view.complete, 10, "the view to read the topic")
        assert view.forbidden() == 1
        assert [(u.id, u.allowed) for u in view.page()] == [("forbidden", False)]
    finally:
        view.close()


def test_schedules_beyond_the_horizon_are_loaded_as_it_advances(
    schedules: SchedulerConfig, target: str
) -> None:
    # A rescan has half a horizon to load what came within it: 3 s here, room
    # for a new consumer's first read on a busy machine (1 s was not).
    config = dataclasses.replace(schedules, horizon_ms=6000, lookahead_ms=200)
    scheduler = Scheduler(config)
    scheduler.start()
    try:
        wait_for(lambda: scheduler.stats().partitions == (0, 1, 2), 30, "the assignment")
        at = in_seconds(10)
        with ScheduleClient(config) as client:
            client.schedule("far", at, target, b"far")
            client.schedule("far-then-cancelled", in_seconds(9), target, b"no")
            client.flush()
            wait_for(lambda: scheduler.stats().loading == (), 10, "the load")
            assert scheduler.stats().held == 0  # both beyond the horizon
            client.cancel("far-then-cancelled")
        wait_for(lambda: scheduler.stats().held >= 1, 15, "the horizon to reach the far one")
        assert time.time() < at  # loaded before it was due (how late it fires: the benchmark)
        wait_for(lambda: fired_ids(config, target)["far"], 30, "the far schedule")
        (record,) = fired(config, target)
        assert record.timestamp()[1] >= at * 1000 - 5  # never early (5 ms of clock rounding)
        assert scheduler.stats().horizon_end_ms > at * 1000
    finally:
        scheduler.stop()


def test_two_schedulers_share_the_topic_and_a_stopped_one_is_taken_over(
    schedules: SchedulerConfig, target: str
) -> None:
    first, second = Scheduler(schedules), Scheduler(schedules)
    first.start()
    second.start()
    try:
        wait_for(
            lambda: first.stats().partitions and second.stats().partitions,
            30,
            "both schedulers to own partitions",
        )
        n = 300
        with ScheduleClient(schedules) as client:
            for i in range(n):
                client.schedule(f"s{i}", in_seconds(1 + 8 * i / n), target, str(i).encode())
        wait_for(lambda: fired_ids(schedules, target).total() >= n // 4, 30, "a quarter fired")
        first.stop()
        wait_for(lambda: fired_ids(schedules, target).total() >= n, 60, "all fired")
        wait_for(lambda: second.stats().partitions == (0, 1, 2), 30, "the takeover to settle")
    finally:
        first.stop()
        second.stop()
    assert fired_ids(schedules, target) == {f"s{i}": 1 for i in range(n)}


def test_a_naive_datetime_is_refused(schedules: SchedulerConfig) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        ScheduleClient(schedules).schedule("x", datetime(2030, 1, 1), "t", b"v")


def test_versions_written_by_a_java_partitioner_are_cancelled_by_ours(
    schedules: SchedulerConfig, target: str, scheduler: Scheduler
) -> None:
    """etf1 issue #53: a schedule written by a Java (or Go) client and cancelled
    by ours must land in one partition, or the cancel misses and it fires."""
    java_like = CheckedProducer(schedules.bootstrap_servers, {"partitioner": "murmur2"})
    ids = [f"java-{i}" for i in range(60)]
    for sid in ids:
        headers = wire.schedule_headers(round(in_seconds(2) * 1000), target, None, [])
        java_like.produce(schedules.topic, key=sid.encode(), value=b"never", headers=headers)
    java_like.flush()
    with ScheduleClient(schedules) as client:
        for sid in ids:
            client.cancel(sid)
        client.schedule("control", in_seconds(3), target, value=b"fires")
    wait_for(lambda: fired_ids(schedules, target)["control"], 30, "the control schedule")
    assert fired_ids(schedules, target) == {"control": 1}
    tombstones = [r for r in fired(schedules, schedules.topic) if r.value() is None]
    partitions = {r.key().decode(): r.partition() for r in tombstones}
    versions = {
        r.key().decode(): r.partition() for r in fired(schedules, schedules.topic) if r.value()
    }
    assert {sid: partitions[sid] for sid in ids} == {sid: versions[sid] for sid in ids}


def test_java_batched_schedules_fire_once_while_ownership_moves(
    schedules: SchedulerConfig, target: str
) -> None:
    """Schedules from another producer: the Java client's partitioner, big
    lingering lz4 batches (many schedules per record batch), written in waves
    while a second scheduler joins and the first leaves. A partition's new
    owner reads it from the start, batch by batch, and must neither skip a
    schedule nor fire one whose tombstone is further on."""
    java_like = Producer(
        producer_config(
            schedules.bootstrap_servers,
            extra={
                "partitioner": "murmur2",
                "linger.ms": 50,
                "batch.size": 1_000_000,
                "compression.type": "lz4",
            },
        )
    )
    ids: list[str] = []

    def wave(n: int) -> None:
        for i in range(n):
            ids.append(sid := f"java-{len(ids)}")
            at = round(in_seconds(1 + 4 * i / n) * 1000)
            headers = wire.schedule_headers(at, target, None, [])
            java_like.produce(schedules.topic, key=sid.encode(), value=b"v", headers=headers)
        assert java_like.flush(30) == 0

    # Small turns: a new owner reads what was fired before it over many
    # turns, with tombstones behind the versions they cancel.
    first, second = Scheduler(schedules, batch_size=200), Scheduler(schedules, batch_size=200)
    first.start()
    try:
        wait_for(lambda: first.stats().partitions == (0, 1, 2), 30, "the first to own all")
        wave(1000)
        second.start()
        wave(1000)
        wait_for(lambda: second.stats().partitions, 30, "the second to own partitions")
        wait_for(lambda: fired_ids(schedules, target).total() >= 500, 30, "some fired")
        first.stop()
        wave(1000)
        wait_for(lambda: second.stats().partitions == (0, 1, 2), 30, "the takeover")
        wait_for(lambda: fired_ids(schedules, target).keys() >= set(ids), 60, "all fired")
    finally:
        first.stop()
        second.stop()
    fires = fired_ids(schedules, target)
    assert {sid: n for sid, n in fires.items() if n > 1} == {}
    assert fires.keys() == set(ids)
