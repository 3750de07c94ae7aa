"""ConsumerGroupAdmin and the offset reset on the real broker: a consumer
group run by a real confluent-kafka Consumer, listed, described, planned and
reset to each kind of target."""

import time

import pytest

from kmqadmin.kafka.admin.consumer_groups import ConsumerGroupAdmin
from kmqadmin.kafka.admin.groups import GroupNotEmpty, GroupNotFound
from kmqadmin.kafka.admin.offset_reset import OffsetOutOfRange, ResetTarget, apply, plan
from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from tests.group_helpers import GroupMember, consumed_group
from tests.process import wait_for


@pytest.fixture
def admin(kafka: EmbeddedBroker) -> ConsumerGroupAdmin:
    return ConsumerGroupAdmin(kafka.bootstrap_servers, timeout_s=10)


@pytest.fixture
def group(kafka: EmbeddedBroker, topic: str) -> str:
    ensure_topics(kafka.bootstrap_servers, {topic: 2})
    return consumed_group(kafka.bootstrap_servers, topic, f"{topic}-g")


def test_a_group_is_listed_described_and_has_its_offsets(
    kafka: EmbeddedBroker, admin: ConsumerGroupAdmin, topic: str, group: str
) -> None:
    listed = {g.group_id: g for g in admin.list_groups()}
    assert listed[group].kind == "consumer" and listed[group].state == "Empty"
    assert admin.positions(group) == {(topic, 0): 4, (topic, 1): 4}
    with GroupMember(kafka.bootstrap_servers, group, topic) as member:
        member.poll()
        described = wait_for(
            lambda: (g := admin.group(group)).members and g, 30, "the member to join"
        )
    assert described.state == "Stable" and described.group_type == "Classic"
    (joined,) = described.members
    assert joined.client_id == "reader-1" and joined.assignment == ((topic, 0), (topic, 1))


def test_an_unknown_group_is_not_found(admin: ConsumerGroupAdmin) -> None:
    with pytest.raises(GroupNotFound, match="no consumer group nobody"):
        admin.group("nobody")
    with pytest.raises(GroupNotFound):  # the broker's INVALID_GROUP_ID
        admin.group("\x00")


def test_each_target_is_planned_then_applied_exactly(
    admin: ConsumerGroupAdmin, topic: str, group: str
) -> None:
    logs = admin.logs
    hour_ago = int(time.time() * 1000) - 1_800_000
    earliest = plan(admin, logs, group, ResetTarget("earliest"))
    assert [(m.partition, m.current, m.new) for m in earliest.moves] == [
        ((topic, 0), 4, 0),
        ((topic, 1), 4, 0),
    ]
    assert admin.positions(group) == {(topic, 0): 4, (topic, 1): 4}  # a dry run moves nothing
    done = apply(admin, logs, group, earliest.offsets)
    assert done.offsets == {(topic, 0): 0, (topic, 1): 0} and done.errors == {}
    assert admin.positions(group) == {(topic, 0): 0, (topic, 1): 0}
    at_time = plan(admin, logs, group, ResetTarget("time", hour_ago))
    assert at_time.offsets == {(topic, 0): 2, (topic, 1): 2}
    latest = plan(admin, logs, group, ResetTarget("latest", topic=topic))
    assert latest.offsets == {(topic, 0): 4, (topic, 1): 4}
    one = plan(admin, logs, group, ResetTarget("offset", 3, topic=topic, partition=1))
    apply(admin, logs, group, one.offsets)
    assert admin.positions(group) == {(topic, 0): 0, (topic, 1): 3}


def test_an_offset_beyond_the_log_is_refused_in_the_plan_and_the_apply(
    admin: ConsumerGroupAdmin, topic: str, group: str
) -> None:
    with pytest.raises(OffsetOutOfRange, match=rf"{topic}:0 offset 9 is outside its log \[0, 4\]"):
        plan(admin, admin.logs, group, ResetTarget("offset", 9))
    with pytest.raises(OffsetOutOfRange, match="offset 5 is outside"):
        apply(admin, admin.logs, group, {(topic, 1): 5})
    assert admin.positions(group) == {(topic, 0): 4, (topic, 1): 4}


def test_a_group_with_a_member_is_refused(
    kafka: EmbeddedBroker, admin: ConsumerGroupAdmin, topic: str, group: str
) -> None:
    with GroupMember(kafka.bootstrap_servers, group, topic) as member:
        member.poll()
        wait_for(lambda: admin.group(group).members, 30, "the member to join")
        with pytest.raises(GroupNotEmpty, match="not empty: 1 consumer"):
            plan(admin, admin.logs, group, ResetTarget("earliest"))
        with pytest.raises(GroupNotEmpty, match="not empty"):
            apply(admin, admin.logs, group, {(topic, 0): 0})
        with pytest.raises(GroupNotEmpty, match="not empty"):  # the broker's own refusal
            admin.move(group, {(topic, 0): 0})
    assert admin.positions(group) == {(topic, 0): 4, (topic, 1): 4}
