"""OwnerProducer's lanes against a real broker: a transaction begun ahead,
its offsets sent before anything is written in it, and the new owner that
must not act before that transaction is decided."""

import dataclasses
import threading
import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from bench.common import read_topic
from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kafka.ownership.barrier import stable_offsets
from kmqadmin.kafka.ownership.fencing import ProducerFenced
from kmqadmin.kafka.ownership.owned import Owned
from kmqadmin.kafka.ownership.owner_producer import OwnerProducer
from tests.process import wait_for


@pytest.fixture
def owned(kafka: EmbeddedBroker) -> Owned:
    name = f"owned-{uuid.uuid4().hex[:8]}"
    ensure_topics(kafka.bootstrap_servers, {name: 2})
    return Owned(kafka.bootstrap_servers, name, f"{name}-g", {}, slot="a")


def member(owned: Owned) -> Consumer:
    """A member of the owners' group, assigned every partition."""
    consumer = Consumer(consumer_config(owned.bootstrap_servers, owned.group_id))
    consumer.subscribe([owned.topic])
    deadline = time.monotonic() + 30
    while not consumer.assignment():
        assert time.monotonic() < deadline, "no assignment in 30 s"
        consumer.poll(0.1)
    return consumer


def offsets_pending(owned: Owned) -> bool:
    """Whether an open transaction commits offsets of the owners' group: a
    read_committed reader's committed() waits for it, so a short one times out."""
    reader = Consumer(consumer_config(owned.bootstrap_servers, owned.group_id))
    try:
        reader.committed([TopicPartition(owned.topic, 0)], timeout=0.5)
    except KafkaException as exc:
        if exc.args[0].code() != KafkaError._TIMED_OUT:
            raise
        return True
    finally:
        reader.close()
    return False


def begun_ahead(owned: Owned) -> tuple[Consumer, OwnerProducer, list[TopicPartition], object]:
    """A member of the group and a two-lane producer that committed one
    transaction and began the next, its offsets (both partitions') pending."""
    consumer = member(owned)
    producer = OwnerProducer(owned, lanes=2)
    positions = [TopicPartition(owned.topic, p, 0) for p in range(2)]
    metadata = consumer.consumer_group_metadata()
    assert producer.transact(positions, metadata, lambda p: None, prepare_next=positions)
    wait_for(lambda: offsets_pending(owned), 10, "the offsets sent ahead")
    return consumer, producer, positions, metadata


def test_a_zombies_transaction_begun_ahead_lands_before_the_heirs_barrier(owned: Owned) -> None:
    """The old owner begins its next transaction while one commits, sending
    offsets under its generation, then leaves the group without knowing it
    (paused through a rebalance, say) and writes in that transaction later.
    The heir's stable offsets wait for that transaction, so its barrier,
    written after them as PartitionOwner._own does, comes after the
    zombie's record: the heir reads it before it acts."""
    old, zombie, positions, metadata = begun_ahead(owned)
    old.close()  # the group moves on; the transaction begun ahead stays open

    heir, heirs = member(owned), OwnerProducer(dataclasses.replace(owned, slot="b"))
    barrier: list[int] = []

    def take_over() -> None:
        stable_offsets(heir, owned.topic, [0, 1])
        barrier.append(heirs.barriers(owned.topic, {0: b"barrier"}, None)[0])

    taking_over = threading.Thread(target=take_over)
    taking_over.start()
    # Not a wait for a condition: what must not happen is the barrier
    # written while the zombie's transaction is open, so the look spans a time.
    taking_over.join(2)
    assert taking_over.is_alive() and barrier == []
    fired: list[int] = []

    def fire(producer: Producer) -> None:
        delivered = lambda err, msg: fired.append(msg.offset())  # noqa: E731
        producer.produce(owned.topic, b"fired late", partition=0, on_delivery=delivered)

    assert zombie.transact(positions, metadata, fire)
    taking_over.join(30)
    assert fired and barrier and barrier[0] > fired[0]
    heir.close()
    for producer in (zombie, heirs):
        producer.close(5)


@pytest.mark.parametrize("ending", ["unprepare", "expire", "close"])
def test_a_transaction_begun_ahead_and_not_used_holds_no_one_back(
    owned: Owned, ending: str
) -> None:
    """Given up before a change of ownership (unprepare), once old (expire:
    a third of the transaction timeout, 2 s here) or at close: its pending
    offsets would hold a new owner back until the broker aborted it."""
    consumer, producer, positions, metadata = begun_ahead(owned)
    if ending == "unprepare":
        producer.unprepare()
    elif ending == "expire":
        # Within 5 s: before the broker would abort it (6 s, then its check).
        wait_for(lambda: (producer.expire(), not offsets_pending(owned))[1], 5, "expired")
    else:
        producer.close(5)
    assert not offsets_pending(owned)
    if ending != "close":  # and the producer goes on
        assert producer.transact(positions, metadata, lambda p: None)
        producer.close(5)
    consumer.close()


def committed_values(owned: Owned) -> list[bytes]:
    """What a read_committed reader sees on partition 0 of the owned topic."""
    return [r.value() for r in read_topic(owned.bootstrap_servers, owned.topic, 1)]


def test_transactions_committed_behind_land_and_report_in_order(owned: Owned) -> None:
    """The second transaction is written, on the other lane, before the
    first one's commit is collected; outcomes reach ``done`` only through
    ``collect``, oldest first, each with the offsets it committed."""
    consumer = member(owned)
    producer = OwnerProducer(owned, lanes=2)
    metadata = consumer.consumer_group_metadata()
    outcomes: list[list[TopicPartition] | None] = []
    for i, value in enumerate((b"first", b"second")):
        write = lambda p, v=value: p.produce(owned.topic, v, partition=0)  # noqa: E731
        producer.transact_behind(
            [TopicPartition(owned.topic, 0, i + 1)], metadata, write, outcomes.append
        )
    assert outcomes == []
    producer.collect(wait=True)
    assert [[(tp.partition, tp.offset) for tp in o or []] for o in outcomes] == [[(0, 1)], [(0, 2)]]
    # Two lanes' records reach the partition in whichever order their
    # produce requests do: the order promised is the outcomes'.
    assert sorted(committed_values(owned)) == [b"first", b"second"]
    producer.close(5)
    consumer.close()


def test_a_transaction_committed_behind_after_the_group_moved_on_is_aborted(
    owned: Owned,
) -> None:
    """Its offsets are refused (KIP-447): ``done`` gets None, nothing it
    wrote is visible, and the producer goes on with the next one."""
    old = member(owned)
    stale = old.consumer_group_metadata()
    old.close()  # the group moves on
    producer = OwnerProducer(owned, lanes=2)
    outcomes: list[list[TopicPartition] | None] = []
    offsets = [TopicPartition(owned.topic, 0, 1)]
    zombie = lambda p: p.produce(owned.topic, b"zombie", partition=0)  # noqa: E731
    producer.transact_behind(offsets, stale, zombie, outcomes.append)
    producer.collect(wait=True)
    assert outcomes == [None]
    current = member(owned)
    heir = lambda p: p.produce(owned.topic, b"heir", partition=0)  # noqa: E731
    producer.transact_behind(offsets, current.consumer_group_metadata(), heir, outcomes.append)
    producer.unprepare()  # what commits behind is collected before ownership changes
    assert [(tp.partition, tp.offset) for tp in outcomes[1] or []] == [(0, 1)]
    assert committed_values(owned) == [b"heir"]
    producer.close(5)
    current.close()


def test_a_commit_behind_that_never_returns_ends_the_producer_once_past_its_life(
    owned: Owned,
) -> None:
    """A commit's call that hangs (librdkafka #5511: a coordinator gone for
    good) holds its records' partitions back from every reader, the owner's
    own consumer included, so the owner may have nothing due that would make
    it wait on that lane. ``collect`` gives up on it once the transaction
    has outlived its life, with no later turn needing it; the next life in
    the slot aborts what it wrote."""
    consumer = member(owned)
    producer = OwnerProducer(owned, lanes=2)
    hang = threading.Event()
    producer._behind[0].submit(hang.wait)  # the lane's thread busy for good
    write = lambda p: p.produce(owned.topic, b"hung", partition=0)  # noqa: E731
    outcomes: list[list[TopicPartition] | None] = []
    producer.transact_behind(
        [TopicPartition(owned.topic, 0, 1)],
        consumer.consumer_group_metadata(),
        write,
        outcomes.append,
    )
    producer.collect()  # neither decided nor past its life: left for later

    def given_up() -> bool:
        try:
            producer.collect()
        except ProducerFenced:
            return True
        return False

    wait_for(given_up, 20, "the hung commit given up on")
    assert outcomes == []  # undecided, not reported as aborted
    OwnerProducer(owned).close(5)  # the slot's next life fences it and aborts it
    hang.set()  # the hung call, if it ever ends, commits nothing
    producer.close(5)
    assert committed_values(owned) == []
    consumer.close()
