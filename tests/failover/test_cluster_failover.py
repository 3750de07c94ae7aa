"""A 3-node KRaft cluster loses the leader of each partition the queue needs,
by kill -9, in the middle of the work: nothing is lost, no copy or letter is
written twice, every schedule fires once.

The cluster runs what a production one needs (kafka/embedded/server_properties.py,
REPLICATED): replication factor 3, min.insync.replicas 2, the transaction
log on three replicas. Each test prints its timeline as JSON.
"""

import dataclasses
import json
import random
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable

import pytest
from confluent_kafka import KafkaException

from kmqadmin.console.models import Cluster, Queue
from kmqadmin.kafka.admin.broker_settings import broker_setting
from kmqadmin.kafka.client import broker_watch
from kmqadmin.kafka.embedded.cluster import EmbeddedCluster
from kmqadmin.kafka.ownership.transaction_timeout import CLEANUP_INTERVAL
from kmqadmin.kmq import (
    Backoff,
    QueueClient,
    QueueConfig,
    QueueProducer,
    RedeliveryTracker,
)
from kmqadmin.kmq import headers as h
from kmqadmin.scheduler import Scheduler
from tests.api.conftest import client_as
from tests.kafka_helpers import read_all
from tests.process import wait_for

MESSAGES = 2000
DROPPED = 0.1  # of deliveries never acked: redelivered after their timeout


@pytest.fixture
def queue(cluster: EmbeddedCluster, topic: str) -> QueueConfig:
    """Registered in the console too, for the API's answers during the outages."""
    registered = Queue.objects.create(
        cluster=Cluster.objects.create(name="main", bootstrap_servers=cluster.bootstrap_servers),
        topic=topic,
        group_id=f"{topic}-workers",
        message_timeout_ms=3000,
        max_redeliveries=20,  # a message dropped 21 times in a row: never, at 10 %
    )
    config = registered.config()
    config.ensure_topics(partitions=3)
    return config


class ApiProbe:
    """Asks the API for the queue's stats once a second, as a dashboard
    does, and keeps each answer's status, time taken and Retry-After."""

    def __init__(self, topic: str) -> None:
        self.topic, self.answers, self._next = topic, [], 0.0
        self._api = client_as("viewer")

    def __call__(self) -> None:
        if time.monotonic() < self._next:
            return
        began = time.monotonic()
        answer = self._api.get(f"/api/v1/queues/{self.topic}/stats")
        took = time.monotonic() - began
        self.answers.append((answer.status_code, round(took, 2), answer.get("Retry-After")))
        self._next = began + 1.0

    def summary(self) -> dict:
        statuses = Counter(status for status, _, _ in self.answers)
        return {
            "api_answers": dict(statuses),
            "api_slowest_s": max(took for _, took, _ in self.answers),
        }

    def check(self) -> None:
        """Every answer within 3 s: 200, or 503 with a Retry-After while a
        leader is being elected; the last one 200."""
        for status, took, retry_after in self.answers:
            assert took < 3, self.answers
            assert status == 200 or (status == 503 and retry_after), self.answers
        assert self.answers[-1][0] == 200, self.answers


def owners_now(*owners: RedeliveryTracker | Scheduler) -> Callable[[], str]:
    """Evidence for a wait on owners: each one's stats and the stacks of
    the threads of this process that are neither the test's nor idle."""

    def told() -> str:
        lines = [repr(owner.stats()) for owner in owners]
        frames = sys._current_frames()
        for thread in threading.enumerate():
            if thread.name.startswith("kmq") and thread.ident in frames:
                stack = "".join(traceback.format_stack(frames[thread.ident])[-6:])
                lines.append(f"--- thread {thread.name}\n{stack}")
        return "\n".join(lines)

    return told


class Timeline:
    """What happened when, in seconds from the start, for the JSON report."""

    def __init__(self, cluster: EmbeddedCluster) -> None:
        self.cluster, self.began, self.events = cluster, time.monotonic(), []

    def note(self, event: str, **more: object) -> None:
        at_s = round(time.monotonic() - self.began, 1)
        self.events.append({"at_s": at_s, "event": event, **more})

    def kill_leader_of(self, topic: str, partition: int, then: Callable[[], object]) -> None:
        """Kills the partition's leader, runs ``then`` (work going on without
        it), and starts it again."""
        node = self.cluster.leader(topic, partition)
        self.cluster.kill(node)
        self.note("kill -9", node=node, leader_of=f"{topic}/{partition}")
        then()
        self.cluster.restart(node)
        self.note("restarted", node=node)


def test_each_nodes_setting_is_read_from_that_node(cluster: EmbeddedCluster) -> None:
    """A DescribeConfigs may name one broker only: the owners' transaction
    timeout reads the cleanup interval of all three, not Kafka's default."""
    values = broker_setting(cluster.bootstrap_servers, {}, CLEANUP_INTERVAL, 10.0)
    assert values == {1: "1000", 2: "1000", 3: "1000"}


@pytest.mark.django_db
def test_leaders_of_the_queue_and_markers_killed_mid_work(
    cluster: EmbeddedCluster, queue: QueueConfig
) -> None:
    timeline, probe = Timeline(cluster), ApiProbe(queue.topic)
    tracker = RedeliveryTracker(queue)
    tracker.start()
    _send(queue, 0, MESSAGES)
    rng = random.Random(11)
    acked: set[bytes] = set()
    delivered = 0
    try:
        with QueueClient(queue) as worker:

            def work_until(count: int) -> bool:
                nonlocal delivered
                probe()
                for message in worker.poll(500, 0.2):
                    delivered += 1
                    if rng.random() >= DROPPED:
                        worker.ack(message)
                        acked.add(message.value)
                return len(acked) >= count

            def work_on() -> None:
                target = len(acked) + MESSAGES // 8
                wait_for(lambda: work_until(target), 180, f"{target} acked", every=0)
                timeline.note("acked", count=len(acked))

            wait_for(lambda: work_until(MESSAGES // 4), 120, "a quarter acked", every=0)
            timeline.note("acked", count=len(acked))
            timeline.kill_leader_of(queue.topic, 0, work_on)
            timeline.kill_leader_of(queue.markers_topic, 0, work_on)
            wait_for(
                lambda: work_until(MESSAGES) and tracker.stats().in_flight == 0,
                300,
                "every message acked",
                every=0,
            )
            timeline.note("all acked", deliveries=delivered)
    finally:
        tracker.stop()
    copies = _copies(queue)
    lost = {f"m{i}".encode() for i in range(MESSAGES)} - acked
    _report(
        "queue and markers",
        timeline,
        lost=len(lost),
        redelivered_copies=copies.total(),
        duplicate_copies=_duplicates(copies),
        **probe.summary(),
    )
    assert lost == set()
    assert {copy: n for copy, n in copies.items() if n > 1} == {}
    assert read_all(queue, queue.dlq_topic) == []
    probe.check()


@pytest.mark.django_db
def test_leaders_of_the_dlq_and_schedules_killed_mid_redelivery_and_fire(
    cluster: EmbeddedCluster, queue: QueueConfig
) -> None:
    """Every delivery dropped: each message is redelivered twice through the
    scheduler (a backoff), then dead-lettered. The schedules' leader dies
    while the first half is fired; the DLQ's right after the second half is
    sent, so its redeliveries and letters go on through that outage."""
    queue = dataclasses.replace(
        queue,
        message_timeout_ms=1000,
        max_redeliveries=2,
        backoff=Backoff(initial_ms=500, multiplier=2, max_ms=5000),
    )
    queue.ensure_topics(partitions=3)
    total, half = 300, 150
    timeline, probe = Timeline(cluster), ApiProbe(queue.topic)
    tracker, scheduler = RedeliveryTracker(queue), Scheduler(queue.scheduler_config())
    tracker.start()
    scheduler.start()
    _send(queue, 0, half)
    deliveries: Counter[bytes] = Counter()
    letters_seen = 0
    try:
        with QueueClient(queue) as worker:

            def dead_lettered(count: int) -> bool:
                nonlocal letters_seen
                probe()
                deliveries.update(m.value for m in worker.poll(500, 0.2))  # never acked
                try:
                    letters_seen = len(_letters(queue))
                except KafkaException:  # the DLQ partition's leader is being elected
                    return False
                return letters_seen >= count

            def work_on(upto: int) -> Callable[[], None]:
                """Work through an outage until a third of a half more letters."""

                def work() -> None:
                    target = min(upto, letters_seen + half // 3)
                    wait_for(
                        lambda: dead_lettered(target),
                        180,
                        f"{target} letters",
                        every=0,
                        evidence=owners_now(tracker, scheduler),
                    )
                    timeline.note("dead-lettered", count=letters_seen)

                return work

            wait_for(
                lambda: dead_lettered(0) and scheduler.stats().fired >= half // 2,
                120,
                f"{half // 2} fires",
                every=0,
            )
            timeline.note("fired", count=scheduler.stats().fired)
            timeline.kill_leader_of(queue.schedules_topic, 0, work_on(half))
            _send(queue, half, total)
            timeline.note("sent", count=total - half)
            timeline.kill_leader_of(queue.dlq_topic, 0, work_on(total))
            wait_for(lambda: dead_lettered(total), 300, "every message dead-lettered", every=0)
            timeline.note("all dead-lettered", deliveries=deliveries.total())
    finally:
        tracker.stop()
        scheduler.stop()
    letters = Counter(r.value() for r in _letters(queue))
    copies = _copies(queue)  # each one fired by the scheduler
    lost = {f"m{i}".encode() for i in range(total)} - set(letters)
    _report(
        "dlq and schedules",
        timeline,
        lost=len(lost),
        fired_copies=copies.total(),
        duplicate_copies=_duplicates(copies),
        duplicate_letters=_duplicates(letters),
        **probe.summary(),
    )
    assert lost == set()
    assert {value: n for value, n in letters.items() if n > 1} == {}
    # Each message's two delayed copies: every schedule fired once, none twice.
    assert sorted(Counter(message_id for message_id, _ in copies).values()) == [2] * total
    assert {copy: n for copy, n in copies.items() if n > 1} == {}
    assert all(n >= 3 for n in deliveries.values())
    probe.check()


@pytest.mark.django_db
def test_a_worker_whose_consumer_lost_every_broker_gets_a_new_one(
    cluster: EmbeddedCluster,
    queue: QueueConfig,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The whole cluster goes (kill -9 of every node) for longer than a
    consumer may be without a broker: the worker replaces its consumer
    (kafka/client/broker_watch.py) rather than trust one that may never get
    a broker back, and once the cluster is back every message is worked,
    those sent before the outage and those sent after it."""
    monkeypatch.setattr(broker_watch, "LOST_S", 3.0)
    _send(queue, 0, 100)
    worked: set[bytes] = set()
    with QueueClient(queue) as worker:

        def work_until(count: int) -> bool:
            for message in worker.poll(100, 0.2):
                worker.ack(message)
                worked.add(message.value)
            return len(worked) >= count

        wait_for(lambda: work_until(100), 60, "the first hundred", every=0)
        for node in cluster.nodes:
            cluster.kill(node)
        outage_ends = time.monotonic() + 2 * broker_watch.LOST_S
        while time.monotonic() < outage_ends:  # the outage itself, the worker polling on
            worker.poll(100, 0.2)
        for node in cluster.nodes.values():
            node.launch()
        cluster.wait_registered(len(cluster.nodes))
        _send(queue, 100, 200)
        wait_for(lambda: work_until(200), 120, "every message, before and after", every=0)

        def markers_written() -> bool:
            """Writes (acks=all, min.insync.replicas 2) wait for each
            partition's replicas to be in sync again after every node died:
            under load, longer than close()'s 30 s. Pending, not failed."""
            try:
                worker.flush(5)
            except KafkaException as exc:
                if " 0 failed" not in str(exc):
                    raise
                return False
            return True

        wait_for(markers_written, 120, "the worker's markers written")
    assert worked == {f"m{i}".encode() for i in range(200)}
    assert "consumer has had no broker" in caplog.text


def _send(queue: QueueConfig, start: int, stop: int) -> None:
    """Messages m<start> .. m<stop - 1>."""
    producer = QueueProducer(queue)
    for i in range(start, stop):
        producer.send(value=f"m{i}".encode())
    producer.flush(60)


def _copies(queue: QueueConfig) -> Counter:
    """Redelivered copies in the queue topic, by (message id, delivery count)."""
    return Counter(
        (h.find(r.headers(), h.MESSAGE_ID), h.find(r.headers(), h.REDELIVERY_COUNT))
        for r in read_all(queue, queue.topic)
        if h.find(r.headers(), h.REDELIVERY_COUNT)
    )


def _letters(queue: QueueConfig) -> list:
    return read_all(queue, queue.dlq_topic)


def _duplicates(counted: Counter) -> int:
    return sum(n - 1 for n in counted.values())


def _report(test: str, timeline: Timeline, **figures: object) -> None:
    broker = f"Apache Kafka {timeline.cluster.version}, 3 nodes"
    print(json.dumps({"test": test, "broker": broker, "timeline": timeline.events, **figures}))
