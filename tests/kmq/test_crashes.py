"""Promises under kill -9: nothing lost, and a crashed tracker duplicates nothing."""

import dataclasses
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka import Consumer, IsolationLevel, Producer, TopicPartition

from kmqadmin.kafka.admin.topics import admin_client
from kmqadmin.kafka.client.config import consumer_config, producer_config
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueClient, QueueConfig, QueueProducer, RedeliveryTracker
from kmqadmin.kmq.config import MarkerFormat
from kmqadmin.kmq.tracking.stats import TrackerStats
from tests.chaos import (
    KILLS,
    Victim,
    end_offsets,
    last_json_line,
    log_tail,
    pause_mid_transaction,
    report,
)
from tests.kafka_helpers import read_all
from tests.process import ROOT, kill9, wait_for
from tests.queue_helpers import JAVA_STYLE, copies, poll_until, send, send_as


def spawn(module: str, queue: QueueConfig, *args: str, log: Path | None = None) -> subprocess.Popen:
    """``log`` collects the process's stderr (appended), to tell why it stalled,
    and its stdout goes beside it (``.out``: a tracker's stats lines)."""
    config = dataclasses.asdict(queue)
    out = log.with_suffix(".out") if log else Path(os.devnull)
    with open(log or os.devnull, "ab") as stderr, out.open("ab") as stdout:
        return subprocess.Popen(
            [sys.executable, "-m", f"tests.kmq.{module}", json.dumps(config), *args],
            cwd=ROOT,
            stdout=stdout,
            stderr=stderr if log else None,
        )


# (seconds of work per message, messages per poll): fast work, and slow work
# whose batch is still being worked on when the kill lands. A compact-format
# client commits a batch's offsets at its next poll, so a slow worker dies
# with none of its current batch committed: it is all read again.
WORK = {"fast work": (0.0, 100), "slow work": (0.02, 20)}


@pytest.mark.parametrize("work", WORK)
def test_kill_9_worker_between_commit_and_ack_loses_nothing(
    queue: QueueConfig, tracker: RedeliveryTracker, tmp_path: Path, work: str
) -> None:
    n = 3000
    send(queue, n)
    log = tmp_path / "processed"
    rng = random.Random(3)
    work_s, per_poll = WORK[work]
    for _ in range(4):
        worker = spawn("run_worker", queue, str(log), str(work_s), str(per_poll))
        wait_for(lambda: log.exists() and log.stat().st_size > 0, 30, "the worker to start")
        time.sleep(rng.uniform(0.5, 2.0))  # a random point in its work, not a wait
        kill9(worker)
    processed = set(log.read_bytes().split())
    with QueueClient(queue) as client:

        def drained() -> bool:
            for m in client.poll(500, 0.2):
                processed.add(m.value)
                client.ack(m)
            return len(processed) == n and tracker.stats().in_flight == 0

        wait_for(drained, 120, "every message processed", every=0)
    assert processed == {f"m{i}".encode() for i in range(n)}
    assert read_all(queue, queue.dlq_topic) == []


def test_kill_9_tracker_mid_redelivery_and_dlq_moves_loses_and_duplicates_nothing(
    queue: QueueConfig, tmp_path: Path
) -> None:
    """Waves of messages keep redeliveries and DLQ moves going while the tracker
    is killed at random points, KMQ_CHAOS_KILLS times (each marker format
    half of make test's, all of make chaos's). Workers drop every first
    delivery and never ack one message in ten (it goes to the DLQ)."""
    kills = KILLS if "KMQ_CHAOS_KILLS" in os.environ else KILLS // 2
    queue = dataclasses.replace(queue, max_redeliveries=2)
    per_wave = 50
    total = per_wave * (kills + 4)
    poison = {f"m{i}".encode() for i in range(0, total, 10)}
    producer = QueueProducer(queue)
    acked: set[bytes] = set()
    sent = 0
    victim = Victim(
        # Restarted in its slot, as a supervised worker is.
        lambda log: spawn("run_tracker", queue, "victim", log=log),
        tmp_path / "tracker.log",
        "tracker assigned",
        seed=5,
    )
    try:
        with QueueClient(queue) as client:

            def settled() -> bool:
                nonlocal sent
                if sent < total:
                    for i in range(sent, sent + per_wave):
                        producer.send(value=f"m{i}".encode())
                    producer.flush()
                    sent += per_wave
                for m in client.poll(500, 0.3):
                    if m.delivery_count >= 2 and m.value not in poison:
                        client.ack(m)
                        acked.add(m.value)
                victim.step(kills)
                return victim.kills >= kills and len(acked) + len(poison) == total

            try:
                wait_for(settled, 120 + 12 * kills, "every message acked or sent on", every=0)
                wait_for(lambda: len(_letters(queue)) >= len(poison), 120, "every poison message")
            except AssertionError as exc:
                raise AssertionError(
                    f"{exc}: {total - len(acked) - len(poison)} of {sent} not acked after "
                    f"{victim.kills} kills; its log ends:\n{victim.log_tail()}"
                ) from exc
    finally:
        victim.stop()
    copied = copies(queue)
    letters = _letters(queue)
    dead = Counter(r.value() for r in letters)
    lost = {f"m{i}".encode() for i in range(total)} - acked - {r.value() for r in letters}
    report(
        "tracker",
        kills=victim.kills,
        sent=total,
        acked=len(acked),
        dead_lettered=len(dead),
        redelivered_copies=copied.total(),
        lost=len(lost),
        duplicate_copies=sum(n - 1 for n in copied.values()),
        duplicate_letters=sum(n - 1 for n in dead.values()),
    )
    assert victim.kills == kills
    assert lost == set()
    assert {copy: n for copy, n in copied.items() if n > 1} == {}
    assert {value: n for value, n in dead.items() if n > 1} == {}
    assert poison <= {r.value() for r in letters}


# Records from our producer on the fixture's 3 partitions, and from another
# producer as a Java client sends them (murmur2 over the keys, batches that
# linger, compressed) on 12: more partitions than markers a batch covers.
SHAPES = {"ours, 3 partitions": (3, None), "Java-style batches, 12 partitions": (12, JAVA_STYLE)}


@pytest.mark.parametrize("shape", SHAPES)
def test_a_tracker_killed_after_closing_messages_leaves_no_second_copy_of_their_replays(
    queue: QueueConfig, tmp_path: Path, shape: str
) -> None:
    """A worker whose offset commits were refused (its group moved while a
    broker failed over) reads its messages again and writes their start
    markers again. The tracker that closed those messages was killed; its
    successor reads the markers only from the commit point on, so only what
    the commit's metadata tells it keeps it from sending second copies."""
    partitions, extra = SHAPES[shape]
    if partitions != 3:  # the fixture's settings on topics of that many partitions
        topic = f"{queue.topic}-{partitions}"
        queue = QueueConfig(
            bootstrap_servers=queue.bootstrap_servers,
            topic=topic,
            group_id=f"{topic}-workers",
            message_timeout_ms=queue.message_timeout_ms,
            max_redeliveries=queue.max_redeliveries,
            marker_format=queue.marker_format,
        )
        queue.ensure_topics(partitions=partitions)
    n = 60
    send_as(queue, n, extra)
    first = spawn("run_tracker", queue, log=tmp_path / "tracker.log")
    copied: list[bytes] = []
    try:
        with QueueClient(queue) as client:
            acked: set[bytes] = set()

            def every_message_acked() -> bool:
                for m in client.poll(100, 0.2):
                    if m.delivery_count >= 2:
                        copied.append(m.value)
                    if m.delivery_count >= 2 or int(m.value[1:]) % 2 == 0:
                        client.ack(m)
                        acked.add(m.value)
                return len(acked) == n

            wait_for(every_message_acked, 60, "the even acked, the odd acked as copies")
        wait_for(lambda: _committed_past_every_marker(queue), 30, "the tracker's last commit")
    finally:
        kill9(first)
    _move_workers_back(queue)
    successor = RedeliveryTracker(queue)
    successor.start()
    try:
        replayed, again, stats = _replay_then_one_more(queue, n + len(copied), successor)
    finally:
        successor.stop()
    assert len(replayed) == n + len(copied) and sorted(copied) == sorted(
        f"m{i}".encode() for i in range(1, n, 2)
    )
    assert again == [b"late"]
    assert stats.redelivered == 1


def _replay_then_one_more(
    queue: QueueConfig, replays: int, successor: RedeliveryTracker
) -> tuple[list, list[bytes], TrackerStats]:
    """Reads every replay (acking none), then one message sent after them,
    until that one comes back as a copy: its deadline is the last, so any
    replay the successor tracked would have been copied before it."""
    with QueueClient(queue) as client:
        replayed = poll_until(client, replays, timeout=60)
        producer = QueueProducer(queue)
        producer.send(value=b"late")
        producer.flush()
        again: list[bytes] = []

        def late_redelivered() -> bool:
            again.extend(m.value for m in client.poll(100, 0.2) if m.delivery_count >= 2)
            return b"late" in again

        wait_for(late_redelivered, 60, "the message sent after the replays to be copied")
        # Counted once the tracker collects its commit, maybe after the copy is read.
        wait_for(lambda: successor.stats().redelivered >= 1, 10, "the tracker's count")
        return replayed, again, successor.stats()


def _committed_past_every_marker(queue: QueueConfig) -> bool:
    """Every markers partition committed to its end (a transaction's control
    record, which is never read as a marker, aside)."""
    ends = _ends(queue, queue.markers_topic)
    return all(c >= end - 1 for c, end in zip(_committed(queue), ends, strict=True))


def _ends(queue: QueueConfig, topic: str) -> list[int]:
    consumer = Consumer(consumer_config(queue.bootstrap_servers, "ends"))
    try:
        return [
            consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in range(_partition_count(queue))
        ]
    finally:
        consumer.close()


def _move_workers_back(queue: QueueConfig) -> None:
    """What a worker whose commits were refused does: read from the start again."""
    consumer = Consumer(consumer_config(queue.bootstrap_servers, queue.group_id))
    try:
        tps = [TopicPartition(queue.topic, p, 0) for p in range(_partition_count(queue))]
        consumer.commit(offsets=tps, asynchronous=False)
    finally:
        consumer.close()


def _letters(queue: QueueConfig) -> list:
    return read_all(queue, queue.dlq_topic)


def test_two_trackers_one_stopped_mid_run_nothing_lost(queue: QueueConfig) -> None:
    """Half the messages are sent while both trackers run, half after one stopped:
    the second half's partitions can only be redelivered by a takeover."""
    n = 1500
    first, second = RedeliveryTracker(queue), RedeliveryTracker(queue)
    first.start()
    second.start()
    acked: set[bytes] = set()
    try:
        wait_for(
            lambda: (
                first.stats().partitions
                and second.stats().partitions
                and len(first.stats().partitions) + len(second.stats().partitions) == 3
            ),
            30,
            "both trackers to share the partitions",
        )
        with QueueClient(queue) as client:

            def acked_at_least(count: int) -> bool:
                for m in client.poll(500, 0.2):
                    if m.delivery_count >= 2:  # drop every first delivery
                        client.ack(m)
                        acked.add(m.value)
                return len(acked) >= count

            send(queue, n // 2)
            wait_for(lambda: acked_at_least(n // 4), 60, "redeliveries by both", every=0)
            first.stop()
            producer = QueueProducer(queue)
            for i in range(n // 2, n):
                producer.send(value=f"m{i}".encode())
            producer.flush()
            wait_for(lambda: acked_at_least(n), 120, "every message acked", every=0)
        assert second.stats().partitions == (0, 1, 2)
        assert acked == {f"m{i}".encode() for i in range(n)}
    finally:
        first.stop()
        second.stop()


def test_tracker_started_before_its_topics_recovers_once_they_exist(
    kafka: EmbeddedBroker, topic: str, marker_format: MarkerFormat
) -> None:
    """A tracker whose topics are missing keeps retrying instead of dying, and
    redelivers once they are created."""
    queue = QueueConfig(
        bootstrap_servers=kafka.bootstrap_servers,
        topic=topic,
        group_id=f"{topic}-workers",
        # Long enough that a delivery handed out is not redelivered again
        # before the test has read the rest of its batch on a loaded machine
        # (at 500 ms one came back a third time, counted 3).
        message_timeout_ms=5000,
        marker_format=marker_format,
    )
    tracker = RedeliveryTracker(queue)
    tracker.start()
    try:
        wait_for(lambda: tracker.restarts >= 1, 30, "the tracker to crash and restart")
        queue.ensure_topics(partitions=3)
        send(queue, 10)
        with QueueClient(queue) as client:
            first = poll_until(client, 10)
            assert {m.delivery_count for m in first} == {1}
            again = poll_until(client, 10, timeout=60)  # none acked: all come back
        assert {m.value for m in again} == {m.value for m in first}
        assert {m.delivery_count for m in again} == {2}
    finally:
        tracker.stop()


# Short enough to outlast in a test: the zombie's open transaction and the
# records it holds expire while it is stopped.
ZOMBIE_TRANSACTION_TIMEOUT_MS = 10_000


@pytest.mark.parametrize("past_its_transaction_timeout", [False, True])
def test_a_paused_tracker_resumed_after_a_takeover_gets_nothing_through(
    queue: QueueConfig, tmp_path: Path, past_its_transaction_timeout: bool
) -> None:
    """The zombie: a tracker stopped (SIGSTOP) inside a redelivery transaction,
    its partitions taken over by another, then resumed: it goes on with that
    transaction. The heir reads none of those partitions' markers before the
    zombie's transaction is decided (its barrier waits behind it), and what
    the zombie begins after its group moved on is refused (KIP-447), so
    every (kmq-id, attempt) is copied once, and the committed offsets come
    back past where they were (they may step back for a moment while a
    tracker's own redeliveries of a partition overlap: markers_partition.py).
    Stopped past its transaction timeout (a long GC pause, a VM
    stall), the broker has aborted its transaction: its producer is fenced,
    and it starts a new life as a new member."""
    queue = dataclasses.replace(
        queue,
        message_timeout_ms=500,
        max_redeliveries=1000,
        kafka_config={"transaction.timeout.ms": ZOMBIE_TRANSACTION_TIMEOUT_MS},
    )
    zombie_log, heir_log = tmp_path / "zombie.log", tmp_path / "heir.log"
    zombie = spawn("run_tracker", queue, log=zombie_log)
    heir = None
    send(queue, 2000)
    try:
        with QueueClient(queue) as client:

            def until(condition):  # the worker polls (never acks) while we wait
                return lambda: client.poll(500, 0.05) is not None and condition()

            wait_for(until(lambda: _stats(zombie_log)["redelivered"] > 2000), 60, "busy zombie")
            pause_mid_transaction(
                zombie,
                queue.bootstrap_servers,
                queue.markers_topic,
                3,
                meanwhile=lambda: client.poll(500, 0.05),
            )
            heir = spawn("run_tracker", queue, log=heir_log)
            wait_for(until(lambda: _stats(heir_log)["redelivered"] > 0), 60, "the heir")
            committed = _committed(queue)
            if past_its_transaction_timeout:
                time.sleep(ZOMBIE_TRANSACTION_TIMEOUT_MS / 1000)  # the stall itself
            joined = _assignments(zombie_log)
            os.kill(zombie.pid, signal.SIGCONT)
            wait_for(
                until(lambda: _assignments(zombie_log) > joined),
                60,
                "the zombie to go on with its transaction, then join again",
                evidence=lambda: log_tail(zombie_log),
            )
            wait_for(
                until(
                    lambda: all(a >= b for a, b in zip(_committed(queue), committed, strict=True))
                ),
                60,
                "committed offsets back past where they were before the zombie's return",
            )
    finally:
        kill9(zombie)
        if heir is not None:
            kill9(heir)
    copied = copies(queue)
    assert {copy: n for copy, n in copied.items() if n > 1} == {}


def test_a_tracker_restarted_in_its_slot_aborts_what_it_left_open_at_once(
    queue: QueueConfig, tmp_path: Path
) -> None:
    """Killed mid-transaction and started again in its slot (a supervised
    worker restarted under its node name), the tracker's first
    init_transactions aborts the transaction it left open. The transaction
    timeout is set past this test's wait: readers of the queue get past the
    kill's open transaction only because the restart aborted it."""
    queue = dataclasses.replace(
        queue,
        message_timeout_ms=500,
        max_redeliveries=1000,
        kafka_config={"transaction.timeout.ms": 120_000},
    )
    log = tmp_path / "tracker.log"
    tracker = spawn("run_tracker", queue, "worker-1", log=log)
    send(queue, 2000)
    admin = admin_client(queue.bootstrap_servers)

    def readers_past(ends: dict[int, int]) -> bool:
        stable = end_offsets(admin, queue.topic, 3, IsolationLevel.READ_COMMITTED)
        return all(stable[p] >= end for p, end in ends.items())

    try:
        with QueueClient(queue) as client:

            def busy() -> bool:  # the worker polls (never acks) while we wait
                return client.poll(500, 0.05) is not None and _stats(log)["redelivered"] > 500

            wait_for(busy, 60, "a busy tracker")
            pause_mid_transaction(
                tracker,
                queue.bootstrap_servers,
                queue.topic,
                3,
                meanwhile=lambda: client.poll(500, 0.05),
            )
        ends = end_offsets(admin, queue.topic, 3, IsolationLevel.READ_UNCOMMITTED)
        kill9(tracker)
        assert not readers_past(ends)
        tracker = spawn("run_tracker", queue, "worker-1", log=log)
        wait_for(
            lambda: readers_past(ends),
            30,
            "readers past the killed tracker's transaction",
            evidence=lambda: log_tail(log),
        )
    finally:
        kill9(tracker)


def test_a_tracker_fenced_mid_turn_commits_none_of_what_it_took_out(queue: QueueConfig) -> None:
    """Fenced between taking due messages out of its states and committing
    their redelivery (another producer took its slot's transactional id),
    the tracker's life ends with that transaction refused. Its last words
    and its revoke must not commit those messages as done: the next life
    redelivers every one of them, once."""
    queue = dataclasses.replace(queue, message_timeout_ms=3000, max_redeliveries=1000)
    n = 300
    tracker = RedeliveryTracker(queue, slot="fenced")
    tracker.start()
    try:
        wait_for(
            lambda: tracker.owned_partitions() == (0, 1, 2) and not tracker.loading_partitions(),
            30,
            "the tracker to own every partition",
        )
        send(queue, n)
        with QueueClient(queue) as client:
            first = poll_until(client, n)  # started, never acked: due in 3 s
            rogue = Producer(
                producer_config(queue.bootstrap_servers, tracker.owned.transactional_id)
            )
            rogue.init_transactions(30)  # the tracker's producer is fenced
            again: Counter[bytes] = Counter()

            def every_one_redelivered() -> bool:
                for m in client.poll(500, 0.2):
                    client.ack(m)
                    again[m.value] += 1
                return len(again) >= n

            wait_for(every_one_redelivered, 60, f"{n} redeliveries")
        assert tracker.restarts >= 1  # the fence ended a life
        assert set(again) == {m.value for m in first}
        assert max(again.values()) == 1, again.most_common(3)
    finally:
        tracker.stop()


def _assignments(log: Path) -> int:
    """How many times the process's tracker was assigned partitions."""
    return log.read_text().count("tracker assigned")


def _stats(log: Path) -> dict:
    """The last whole stats line a run_tracker process printed."""
    return last_json_line(log.with_suffix(".out")) or {"in_flight": 0, "redelivered": 0}


def _partition_count(queue: QueueConfig) -> int:
    """The queue's partitions (its markers and DLQ topics have as many)."""
    consumer = Consumer(consumer_config(queue.bootstrap_servers, "partitions"))
    try:
        return len(consumer.list_topics(queue.topic, timeout=10).topics[queue.topic].partitions)
    finally:
        consumer.close()


def _committed(queue: QueueConfig) -> list[int]:
    """The tracker group's committed markers offsets, partition by partition."""
    consumer = Consumer(consumer_config(queue.bootstrap_servers, queue.tracker_group_id))
    try:
        tps = [TopicPartition(queue.markers_topic, p) for p in range(_partition_count(queue))]
        return [tp.offset for tp in consumer.committed(tps, timeout=10)]
    finally:
        consumer.close()
