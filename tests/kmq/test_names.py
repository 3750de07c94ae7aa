"""Kafka's topic name rule, derived names included."""

import pytest

from kmqadmin.kmq import names


@pytest.mark.parametrize("name", ["", ".", "..", "a b", "é", "a/b", "x" * 250, "a\n"])
def test_names_kafka_refuses_are_refused(name: str) -> None:
    with pytest.raises(names.BadTopicName):
        names.check_topic(name)


def test_a_queue_topic_leaves_room_for_its_companions() -> None:
    longest = names.MAX_TOPIC_LENGTH - len(names.dlq_topic(""))
    assert names.check_topic("q" * longest, queue=True)
    assert names.check_topic("q" * (longest + 1))  # fine for a topic of its own
    with pytest.raises(names.BadTopicName, match="__undelivered"):
        names.check_topic("q" * (longest + 1), queue=True)
    assert names.check_topic("a.b_c-D9") == "a.b_c-D9"
