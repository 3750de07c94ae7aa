"""A schedule record whose headers confluent-kafka cannot decode (a header name
that is not UTF-8, issue 17), or that no scheduler could fire (an epoch that
overflows, a target topic Kafka would refuse), is skipped; the partition's
other schedules fire."""

import logging

import pytest

from kmqadmin.scheduler import Scheduler, SchedulerConfig, wire
from tests.process import wait_for
from tests.raw_produce import RawRecord, produce_raw
from tests.schedule_helpers import fired_ids, in_seconds


def schedule(
    sid: str, target: str, extra: list[tuple[bytes, bytes]], epoch: bytes | None = None
) -> RawRecord:
    epoch = epoch or wire.encode_epoch(int(in_seconds(1) * 1000))
    headers = [(wire.EPOCH.encode(), epoch), (wire.TARGET_TOPIC.encode(), target.encode())]
    return RawRecord(sid.encode(), key=sid.encode(), headers=headers + extra, partition=0)


def written(
    scheduler: Scheduler,
    schedules: SchedulerConfig,
    target: str,
    records: list[RawRecord],
    good: int,
    caplog: pytest.LogCaptureFixture,
) -> list[int]:
    """``records`` written once the scheduler owns every partition; their
    offsets, once ``good`` of them fired and the rest were counted skipped."""
    wait_for(lambda: scheduler.stats().partitions == (0, 1, 2), 30, "the assignment")
    with caplog.at_level(logging.WARNING):
        offsets = produce_raw(schedules.bootstrap_servers, schedules.topic, records)
        wait_for(lambda: len(fired_ids(schedules, target)) == good, 30, f"{good} fires")
        skips = len(records) - good
        wait_for(lambda: scheduler.stats().skipped == skips, 10, f"{skips} skips counted")
    return offsets


def test_it_is_skipped_and_the_rest_of_the_partition_fires(
    schedules: SchedulerConfig,
    target: str,
    scheduler: Scheduler,
    caplog: pytest.LogCaptureFixture,
) -> None:
    records = [
        schedule("before", target, []),
        schedule("poison", target, [(b"\xff", b"x")]),
        schedule("after", target, [(b"trace", b"1")]),
    ]
    offsets = written(scheduler, schedules, target, records, 2, caplog)

    assert fired_ids(schedules, target) == {"before": 1, "after": 1}
    assert f"{schedules.topic}/0/{offsets[1]}: undecodable" in caplog.text


def test_an_unfireable_epoch_or_target_is_skipped_without_a_restart(
    schedules: SchedulerConfig,
    target: str,
    scheduler: Scheduler,
    caplog: pytest.LogCaptureFixture,
) -> None:
    records = [
        schedule("far-past", target, [], epoch=b"-1e306"),
        schedule("nul", "a\x00b", []),
        schedule("dotdot", "..", []),
        schedule("good", target, []),
    ]
    offsets = written(scheduler, schedules, target, records, 1, caplog)

    assert fired_ids(schedules, target) == {"good": 1}
    assert scheduler.restarts == 0
    assert f"{schedules.topic}/0/{offsets[0]}: scheduler-epoch is before the year 1" in caplog.text
    assert f"{schedules.topic}/0/{offsets[1]}: scheduler-target-topic" in caplog.text
