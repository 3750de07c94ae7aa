"""BrokerWatch: how long a client has been without a broker (pure logic, and
the statistics of a real consumer)."""

import json
import threading

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException

from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.client.broker_watch import LOST_S, BrokerWatch, abandon
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from tests.process import wait_for


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _stats(group: str | None = None, join: str = "steady", **brokers: tuple[str, str]) -> str:
    """A client's statistics; ``group``, ``join``: its group handler's
    state and join state, if it has one."""
    stats: dict = {
        "brokers": {name: {"source": src, "state": st} for name, (src, st) in brokers.items()}
    }
    if group is not None:
        stats["cgrp"] = {"state": group, "join_state": join}
    return json.dumps(stats)


def test_a_client_is_lost_only_after_lost_s_with_no_real_broker_up() -> None:
    clock = Clock()
    watch = BrokerWatch(clock)
    clock.now += LOST_S - 1
    assert not watch.lost()  # a new client gets its first LOST_S
    watch.on_stats(_stats(b1=("learned", "UP"), gc=("logical", "UP")))
    clock.now += LOST_S - 1
    assert not watch.lost()
    # What a consumer left by librdkafka issue #5511 reports: only the
    # coordinator's logical handle up, the dropped broker stuck in INIT.
    for _ in range(3):
        clock.now += 1
        watch.on_stats(_stats(b1=("learned", "INIT"), gc=("logical", "UP")))
    assert watch.lost() and watch.down_for_s() == LOST_S + 2
    with pytest.raises(KafkaException, match="no broker or group for 17 s") as lost:
        watch.raise_if_lost()
    assert lost.value.args[0].code() == KafkaError._ALL_BROKERS_DOWN
    watch.on_stats(_stats(boot=("configured", "UP")))
    assert not watch.lost()
    watch.raise_if_lost()  # found again: nothing raised


def test_a_group_consumer_whose_coordinator_never_comes_back_is_lost() -> None:
    """librdkafka #5511 again: the bootstrap broker found again and up, the
    group handler waiting for a coordinator it never reaches."""
    clock = Clock()
    watch = BrokerWatch(clock)
    watch.on_stats(_stats(group="up", b1=("learned", "UP")))
    for _ in range(int(LOST_S) + 1):
        clock.now += 1
        watch.on_stats(_stats(group="wait-broker-transport", boot=("configured", "UP")))
    assert watch.lost()
    watch.on_stats(_stats(group="up", boot=("configured", "UP")))
    assert not watch.lost()


@pytest.mark.parametrize("stuck_in", ["wait-metadata", "wait-unassign-to-complete"])
def test_a_group_consumer_up_but_stuck_out_of_its_group_is_lost(stuck_in: str) -> None:
    """What the demo's `orders` worker reported after a broker's SIGSTOP:
    its group handler up and a broker UP, and the member out of its group,
    waiting for topic metadata never asked again (librdkafka dropped the
    request with the bootstrap handle) or for an offset commit in flight. A
    member the broker is letting in (wait-join) is in touch all along: the
    broker holds its JoinGroup until every member has rejoined."""
    clock = Clock()
    stuck, joining = BrokerWatch(clock), BrokerWatch(clock)
    for _ in range(int(LOST_S) + 1):
        clock.now += 1
        up = ("learned", "UP")
        stuck.on_stats(_stats(group="up", join=stuck_in, b1=up))
        joining.on_stats(_stats(group="up", join="wait-join", b1=up))
    assert stuck.lost()
    assert not joining.lost()
    stuck.on_stats(_stats(group="up", b1=("learned", "UP")))
    assert not stuck.lost()


def test_statistics_that_do_not_parse_teach_nothing() -> None:
    clock = Clock()
    watch = BrokerWatch(clock)
    clock.now += LOST_S
    up = {"b1": {"source": "learned", "state": "UP"}}
    no_group = json.dumps({"brokers": up, "cgrp": "up"})
    for garbage in ("", "[]", "{", '{"brokers": 3}', '{"brokers": {"x": 1}}', no_group):
        watch.on_stats(garbage)
    assert watch.lost()


def test_a_real_consumers_statistics_show_its_broker_up(kafka: EmbeddedBroker, topic: str) -> None:
    """Guards the field names the watch reads against librdkafka's own."""
    seen: list[str] = []
    watch = BrokerWatch()
    settings = watch.settings()
    watched = settings["stats_cb"]
    settings["stats_cb"] = lambda stats: (seen.append(stats), watched(stats))
    ensure_topics(kafka.bootstrap_servers, {topic: 1})
    consumer = Consumer(consumer_config(kafka.bootstrap_servers, f"{topic}-g", settings))
    try:
        consumer.subscribe([topic])
        wait_for(lambda: consumer.poll(0.2) is None and consumer.assignment(), 30, "a join")
        seen.clear()  # statistics from the consumer in its group
        wait_for(lambda: consumer.poll(0.2) is None and seen, 30, "statistics")
    finally:
        consumer.close()
    stats = json.loads(seen[-1])
    assert any(b["source"] == "learned" and b["state"] == "UP" for b in stats["brokers"].values())
    assert stats["cgrp"]["state"] == "up"
    assert stats["cgrp"]["join_state"] == "steady"
    assert watch.down_for_s() < 5


def test_an_abandoned_consumer_is_closed_only_once_the_call_inside_it_returned() -> None:
    """Destroying a librdkafka handle a call is still inside would crash
    the process: abandon(after=) waits for the call (bounded_call.py)."""
    answered, closed = threading.Event(), threading.Event()

    class Stub:
        def close(self) -> None:
            assert answered.is_set(), "closed under a call still inside it"
            closed.set()

    call = threading.Thread(target=answered.wait, daemon=True)
    call.start()
    abandon(Stub(), after=call)  # type: ignore[arg-type]
    assert not closed.wait(0.3)
    answered.set()
    assert closed.wait(5)
