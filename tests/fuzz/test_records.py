"""Hostile records in every topic a queue has, beside well-formed messages:
no service dies, no page breaks, and every well-formed message still ends
acked or dead-lettered (docs/promises.md, "Bad input never stops a service").

Each example writes a batch of hostile records (raw bytes, header names that
are not UTF-8 included: tests/raw_produce.py) into the queue, its markers
topic, its DLQ and its schedules topic (the queue has a backoff, so its
redeliveries go through that topic's scheduler), sends a few well-formed
messages with QueueProducer, waits for those to settle, then walks every
console page and API list over what the topics now hold, the message
browser's pages of each topic included. The tracker, the scheduler and a
worker run as processes of their own for the whole test.
"""

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from confluent_kafka import IsolationLevel, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec
from hypothesis import given, note
from hypothesis import strategies as st

from kmqadmin.console.models import Cluster, Queue, ScheduleTopic
from kmqadmin.console.services.clusters import clients
from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueConfig, QueueProducer, markers, names
from tests.chaos import last_json_line, report
from tests.fuzz import strategies as fz
from tests.fuzz.pages import Walk, walk_browser, walk_queue, walk_schedules
from tests.fuzz.profile import FUZZ
from tests.fuzz.services import Child, start_services
from tests.kafka_helpers import read_all
from tests.process import wait_for
from tests.raw_produce import RawRecord, produce_raw
from tests.users import user_with

pytestmark = pytest.mark.django_db

# Fixed for the module so that strategies can aim at them (kmq-ids naming
# this queue, schedules firing into it); unique for the run.
TOPIC = f"fz-{uuid.uuid4().hex[:10]}"
TARGET = f"{TOPIC}-target"
SETTLE_S = 45


@dataclass
class Fuzzed:
    queue: Queue
    schedules: ScheduleTopic
    config: QueueConfig
    services: list[Child]
    acked: Path
    producer: QueueProducer
    walk: Walk
    counts: dict[str, int] = field(default_factory=dict)

    def problems(self) -> list[str]:
        return [problem for child in self.services for problem in child.problems()]

    def count(self, **added: int) -> None:
        for name, n in added.items():
            self.counts[name] = self.counts.get(name, 0) + n


@pytest.fixture
def fuzzed(kafka: EmbeddedBroker, tmp_path: Path) -> Iterator[Fuzzed]:
    cluster = Cluster.objects.create(name="local", bootstrap_servers=kafka.bootstrap_servers)
    queue = Queue.objects.create(
        cluster=cluster,
        topic=TOPIC,
        group_id=f"{TOPIC}-workers",
        partitions=fz.PARTITIONS,
        message_timeout_ms=1500,
        max_redeliveries=1,
        backoff_initial_ms=100,
        backoff_max_ms=1000,
    )
    config = queue.config()
    config.ensure_topics(fz.PARTITIONS)
    ensure_topics(kafka.bootstrap_servers, {TARGET: fz.PARTITIONS})
    schedules = ScheduleTopic.objects.create(
        cluster=cluster, topic=config.schedules_topic, group_id=f"{TOPIC}-schedules"
    )
    acked = tmp_path / "acked"
    acked.touch()
    fuzzed = Fuzzed(
        queue,
        schedules,
        config,
        start_services(config, config.scheduler_config(), tmp_path, acked),
        acked,
        QueueProducer(config),
        Walk(user_with("admin")),
    )
    try:
        yield fuzzed
    finally:
        for child in fuzzed.services:
            child.stop()
        clients.close(TOPIC)
        clients.close(config.schedules_topic)
        report("fuzz-records", **fuzzed.counts, pages=fuzzed.walk.visited)


@FUZZ
@given(
    hostile=st.lists(fz.queue_records(TOPIC), max_size=8),
    marks=st.lists(fz.marker_records, max_size=8),
    letters=st.lists(fz.letters(TOPIC), max_size=6),
    schedules=st.lists(fz.schedule_records([TOPIC, TARGET, names.dlq_topic(TOPIC)]), max_size=8),
    intents=fz.intents,
)
def test_hostile_records_stop_no_service_and_break_no_page(
    fuzzed: Fuzzed,
    hostile: list[RawRecord],
    marks: list[fz.Mark],
    letters: list[RawRecord],
    schedules: list[RawRecord],
    intents: list[str],
) -> None:
    for name, written in [("queue", hostile), ("markers", marks), ("DLQ", letters)]:
        note(f"{name}: {written!r}")
    note(f"schedules: {schedules!r}")
    config = fuzzed.config
    coordinates = _write_by_partition(config, hostile)
    _write(config, config.markers_topic, [_marker(m, coordinates) for m in marks])
    _write(config, config.dlq_topic, letters)
    _write(config, config.schedules_topic, schedules)
    sent = {f"wf:{uuid.uuid4().hex}:{intent}".encode(): intent for intent in intents}
    for value in sent:
        fuzzed.producer.send(value=value, key=value[-12:])
    fuzzed.producer.flush()
    fuzzed.count(examples=1, hostile=len(hostile) + len(marks) + len(letters) + len(schedules))
    fuzzed.count(well_formed=len(sent))

    def settled() -> bool:
        if problems := fuzzed.problems():
            raise AssertionError("\n".join(problems))
        acked = set(fuzzed.acked.read_bytes().split())
        dead = {r.value() for r in read_all(config, config.dlq_topic, fz.PARTITIONS)}
        return all(value in (acked if intent == "ack" else dead) for value, intent in sent.items())

    try:
        wait_for(settled, SETTLE_S, "every well-formed message acked or dead-lettered", every=0.5)
    except AssertionError as timed_out:
        raise AssertionError(_unsettled(fuzzed, sent)) from timed_out
    walk = fuzzed.walk
    walk.failures.clear()
    walk_queue(walk, fuzzed.queue)
    walk_schedules(walk, fuzzed.schedules)
    walk_browser(walk, fuzzed.queue)
    assert walk.failures == []
    assert fuzzed.problems() == []


def _unsettled(fuzzed: Fuzzed, sent: dict[bytes, str]) -> str:
    """Where each well-formed message that did not settle is: its queue
    coordinates and the markers naming them, what the DLQ and schedules
    topics hold of it, and the end of each service's log."""
    config = fuzzed.config
    done = set(fuzzed.acked.read_bytes().split())
    done |= {r.value() for r in read_all(config, config.dlq_topic, fz.PARTITIONS)}
    lines = []
    for value, intent in sent.items():
        if value in done:
            continue
        found = [
            (r.partition(), r.offset())
            for r in read_all(config, config.topic, fz.PARTITIONS)
            if r.value() == value
        ]
        keys = {markers.encode_key(*at): at for at in found}
        marks = [
            (keys[r.key()], r.partition(), r.offset(), r.value()[:1])
            for r in read_all(config, config.markers_topic, fz.PARTITIONS)
            if r.key() in keys
        ]
        elsewhere = {
            topic: [
                (r.partition(), r.offset())
                for r in read_all(config, topic, fz.PARTITIONS)
                if value in (r.value() or b"")
            ]
            for topic in (config.dlq_topic, config.schedules_topic)
        }
        lines.append(f"{value!r} ({intent}): queue {found}, markers {marks}, {elsewhere}")
    lines.append(f"queue ends (committed, uncommitted): {_ends(config)}")
    for child in fuzzed.services:
        lines.append(f"--- {child.name}:\n{child.tail(40)}")
        lines.append(f"stats: {last_json_line(child.log.with_suffix('.out'))}")
    return "\n".join(lines)


def _ends(config: QueueConfig) -> dict[int, tuple[int, int]]:
    """Each queue partition's last stable offset and high watermark: apart,
    a transaction is open there and hides what follows it from the workers."""
    admin = AdminClient({"bootstrap.servers": config.bootstrap_servers})
    asked = {TopicPartition(config.topic, p): OffsetSpec.latest() for p in range(fz.PARTITIONS)}
    ends: dict[int, list[int]] = {}
    for level in (IsolationLevel.READ_COMMITTED, IsolationLevel.READ_UNCOMMITTED):
        for tp, future in admin.list_offsets(asked, isolation_level=level).items():
            ends.setdefault(tp.partition, []).append(future.result().offset)
    return {p: (committed, uncommitted) for p, (committed, uncommitted) in ends.items()}


def _write(config: QueueConfig, topic: str, records: list[RawRecord]) -> list[int]:
    return produce_raw(config.bootstrap_servers, topic, records) if records else []


def _write_by_partition(config: QueueConfig, records: list[RawRecord]) -> list[tuple[int, int]]:
    """(partition, offset) of each record written to the queue topic: one write
    per partition, whose offsets come back in the order sent."""
    coordinates = []
    for partition in sorted({r.partition for r in records}):
        on = [r for r in records if r.partition == partition]
        coordinates += [(partition, offset) for offset in _write(config, config.topic, on)]
    return coordinates


def _marker(mark: fz.Mark, coordinates: list[tuple[int, int]]) -> RawRecord:
    """A marker record; a key given as an index names a hostile record of the
    example (or, with none, an offset no record has)."""
    key, value, partition, timestamp = mark
    if isinstance(key, int):
        at = coordinates[key % len(coordinates)] if coordinates else (partition, -1 - key)
        key = markers.KEY.pack(*at)
    return RawRecord(value, key=key, partition=partition, timestamp=timestamp)
