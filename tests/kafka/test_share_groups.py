"""ShareGroupAdmin on the real broker: a share group run by a real
confluent-kafka ShareConsumer, described, measured and reset over the Kafka
protocol (confluent-kafka has no share-group admin call)."""

import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer

from kmqadmin.kafka.admin.groups import GroupNotEmpty, GroupNotFound
from kmqadmin.kafka.admin.offset_reset import ResetTarget, apply, plan
from kmqadmin.kafka.admin.share_groups import PartitionProgress, ShareGroupAdmin
from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from tests.process import wait_for
from tests.share_helpers import Sharer, read_from_earliest


@pytest.fixture
def admin(kafka: EmbeddedBroker) -> Iterator[ShareGroupAdmin]:
    made = ShareGroupAdmin(kafka.bootstrap_servers, timeout_s=10)
    yield made
    made.close()


@pytest.fixture
def group(kafka: EmbeddedBroker, topic: str) -> str:
    ensure_topics(kafka.bootstrap_servers, {topic: 2})
    read_from_earliest(kafka.bootstrap_servers, f"{topic}-share")
    return f"{topic}-share"


def produce(kafka: EmbeddedBroker, topic: str, per_partition: int, at: int | None = None) -> None:
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    for i in range(per_partition):
        for partition in (0, 1):
            producer.produce(topic, b"v%d" % i, partition=partition, timestamp=at or 0)
    assert producer.flush(10) == 0


def test_a_group_nobody_joined_is_no_such_group_not_an_error(admin: ShareGroupAdmin) -> None:
    described = admin.describe("never-joined")
    assert not described.exists and described.members == ()


def test_a_running_consumer_is_a_member_with_its_assignment(
    kafka: EmbeddedBroker, admin: ShareGroupAdmin, topic: str, group: str
) -> None:
    produce(kafka, topic, 1)
    with Sharer(kafka.bootstrap_servers, group, topic, client_id="sharer-1") as sharer:
        sharer.accept(1)
        described = wait_for(
            lambda: (d := admin.describe(group)).members and d, 30, "the member to show"
        )
    assert described.exists and described.state == "Stable" and described.epoch >= 1
    (member,) = described.members
    assert member.client_id == "sharer-1" and member.host == "127.0.0.1"
    assert member.assignment == ((topic, 0), (topic, 1))


def test_start_offsets_advance_as_records_are_accepted_and_lag_shrinks(
    kafka: EmbeddedBroker, admin: ShareGroupAdmin, topic: str, group: str
) -> None:
    produce(kafka, topic, 5)
    assert [p.start_offset for p in admin.progress(group, topic)] == [None, None]
    with Sharer(kafka.bootstrap_servers, group, topic, client_id="sharer") as sharer:
        sharer.accept(10)
        # The broker counts what was accepted past the persisted start at once.
        assert [(p.end, p.lag, p.lag_exact) for p in admin.progress(group, topic)] == [
            (5, 0, True),
            (5, 0, True),
        ]
        produce(kafka, topic, 3)
        assert [p.lag for p in admin.progress(group, topic)] == [3, 3]
        sharer.accept(6)
        # The persisted start offset moves with the next acknowledgement write.
        progress = wait_for(
            lambda: started_past(admin.progress(group, topic), 5), 30, "start offsets past 5"
        )
        assert [(p.end, p.lag) for p in progress] == [(8, 0), (8, 0)]


def started_past(progress: list[PartitionProgress], offset: int) -> list[PartitionProgress]:
    return progress if all((p.start_offset or 0) >= offset for p in progress) else []


def test_a_reset_is_refused_while_a_consumer_is_connected(
    kafka: EmbeddedBroker, admin: ShareGroupAdmin, topic: str, group: str
) -> None:
    produce(kafka, topic, 1)
    with Sharer(kafka.bootstrap_servers, group, topic, client_id="sharer") as sharer:
        sharer.accept(2)
        with pytest.raises(GroupNotEmpty, match="not empty: 1 consumer"):
            reset(admin, group, ResetTarget("earliest", topic=topic))
        with pytest.raises(GroupNotEmpty, match="not empty"):  # the broker's refusal too
            admin.move(group, {(topic, 0): 0})


def test_reset_to_earliest_latest_and_a_time_then_consume_again(
    kafka: EmbeddedBroker, admin: ShareGroupAdmin, topic: str, group: str
) -> None:
    early = int(time.time() * 1000) - 60_000
    produce(kafka, topic, 2, at=early)  # offsets 0, 1 (per partition)
    produce(kafka, topic, 2, at=early + 30_000)  # offsets 2, 3
    with Sharer(kafka.bootstrap_servers, group, topic, client_id="first") as sharer:
        sharer.accept(8)
    wait_for(lambda: not admin.describe(group).members, 30, "the consumer to leave")

    assert reset(admin, group, ResetTarget("earliest")).offsets == {(topic, 0): 0, (topic, 1): 0}
    assert again(kafka, group, topic, 8) == 8
    at_time = reset(admin, group, ResetTarget("time", early + 30_000, topic=topic))
    assert at_time.offsets == {(topic, 0): 2, (topic, 1): 2}
    assert again(kafka, group, topic, 4) == 4
    result = reset(admin, group, ResetTarget("latest"))
    assert result.offsets == {(topic, 0): 4, (topic, 1): 4} and result.errors == {}
    assert [p.start_offset for p in admin.progress(group, topic)] == [4, 4]
    assert admin.positions(group) == {(topic, 0): 4, (topic, 1): 4}
    one = reset(admin, group, ResetTarget("offset", 1, topic=topic, partition=1))
    assert one.offsets == {(topic, 1): 1}
    assert admin.positions(group) == {(topic, 0): 4, (topic, 1): 1}
    assert [(g.group_id, g.kind) for g in admin.list_groups() if g.group_id == group] == [
        (group, "share")
    ]


def reset(admin: ShareGroupAdmin, group: str, target: ResetTarget):
    """The dry run, then exactly what it planned."""
    return apply(admin, admin.logs, group, plan(admin, admin.logs, group, target).offsets)


def again(kafka: EmbeddedBroker, group: str, topic: str, count: int) -> int:
    """Consumes ``count`` records anew (after a reset) and leaves."""
    with Sharer(kafka.bootstrap_servers, group, topic, client_id="again") as sharer:
        return len(sharer.accept(count))


def test_settings_are_the_groups_and_the_brokers(admin: ShareGroupAdmin, group: str) -> None:
    settings = admin.settings(group)
    assert settings.auto_offset_reset == "earliest"  # set by the fixture
    assert settings.lock_duration_ms == 30_000 and settings.isolation_level == "read_uncommitted"
    assert settings.limits.delivery_count_limit == 5
    assert settings.limits.min_lock_ms <= settings.lock_duration_ms
    assert settings.lock_duration_ms <= settings.limits.max_lock_ms


def test_a_reset_to_no_known_position_is_refused_before_any_call() -> None:
    with pytest.raises(ValueError, match="not 'yesterday'"):
        ResetTarget("yesterday")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs a value"):
        ResetTarget("time")


def test_an_unknown_share_group_is_not_found(admin: ShareGroupAdmin) -> None:
    with pytest.raises(GroupNotFound, match="no share group never-joined"):
        admin.group("never-joined")
