"""LifecycleFinder: a message's story, read from the queue, markers and DLQ."""

from confluent_kafka import Producer

from kmqadmin.kmq import (
    DeadLetters,
    LetterFilter,
    LifecycleFinder,
    QueueClient,
    QueueConfig,
    RedeliveryTracker,
    headers,
    markers,
)
from tests.kafka_helpers import read_all
from tests.process import wait_for
from tests.queue_helpers import dlq, poll_until, send
from tests.raw_produce import RawRecord, produce_raw


def test_story_of_an_acked_and_of_a_dead_lettered_message(
    queue: QueueConfig, tracker: RedeliveryTracker
) -> None:
    send(queue, 2)
    with QueueClient(queue) as client:
        first, doomed = sorted(poll_until(client, 2), key=lambda m: m.value)
        client.ack(first)
        client.release(doomed)  # redelivered: copy 2
        [copy] = poll_until(client, 1)
        assert copy.id == doomed.id
        client.reject(copy, "poison")
        wait_for(lambda: len(dlq(queue)) == 1, 30, "the dead letter")
    finder = LifecycleFinder(queue)
    try:
        acked = finder.find(first.id)
        assert acked is not None and acked.complete
        assert acked.state == "acked"
        assert [e.kind for e in acked.events] == ["produced", "started", "acked"]
        assert acked.first.value() == first.value

        dead = wait_for(lambda: _with_letter(finder, doomed.id), 20, "the letter found")
        assert dead.state == "dead-lettered"
        assert dead.copies == [doomed.offset, copy.offset]
        kinds = [e.kind for e in dead.events]
        assert kinds[0] == "produced" and kinds[-1] == "dead-lettered"
        assert kinds.count("started") == 2 and "redelivered" in kinds
        assert "retry asked" in kinds and "reject asked" in kinds
        assert dead.events[-1].detail == "rejected"

        letters = DeadLetters(queue)
        try:
            letters.redrive(dead.letters)
        finally:
            letters.close()
        with QueueClient(queue) as client:
            [back] = poll_until(client, 1)
            assert (back.id, back.partition, back.delivery_count) == (
                doomed.id,
                doomed.partition,
                1,
            )
            client.ack(back)
        again = wait_for(
            lambda: (s := finder.find(doomed.id)) and s.state == "acked" and s, 20, "the ack"
        )
        kinds = [e.kind for e in again.events]
        assert kinds[-3:] == ["sent again", "started", "acked"]
        assert "dead-lettered" in kinds
    finally:
        finder.close()


def test_ids_that_name_no_message(queue: QueueConfig) -> None:
    send(queue, 1)
    finder = LifecycleFinder(queue)
    try:
        assert finder.find("nonsense") is None
        assert finder.find("other-topic/0/0") is None
        assert finder.find(f"{queue.topic}/99/0") is None  # no such partition
        assert finder.find(f"{queue.topic}/0/999") is None  # no such offset
    finally:
        finder.close()


def _with_letter(finder: LifecycleFinder, message_id: str):
    story = finder.find(message_id)
    return story if story is not None and story.letters else None


def test_redriven_letters_go_back_to_their_first_copys_partition(queue: QueueConfig) -> None:
    """Keyless letters would follow the partitioner (all to one partition, as
    it batches); each must land where its kmq-id says, or its story splits."""
    producer = Producer({"bootstrap.servers": queue.bootstrap_servers})
    named = [0, 1, 2, 0, 1, 2]
    for n, partition in enumerate(named):
        stable = headers.message_id(queue.topic, partition, 100 + n).encode()
        producer.produce(queue.dlq_topic, value=b"%d" % n, headers=[(headers.MESSAGE_ID, stable)])
    producer.flush(10)
    letters = DeadLetters(queue)
    try:
        found = wait_for(lambda: _all_letters(letters, len(named)), 20, "the letters")
        letters.redrive(found)
    finally:
        letters.close()
    back = wait_for(
        lambda: len(r := read_all(queue, queue.topic)) == len(named) and r, 20, "copies"
    )
    assert sorted((int(r.value()), r.partition()) for r in back) == list(enumerate(named))


def _all_letters(letters: DeadLetters, n: int) -> list:
    found = [x for p in range(3) for x in letters.page(p, 100, None, LetterFilter()).letters]
    return found if len(found) == n else []


def test_markers_that_do_not_decode_are_left_out_of_the_story(queue: QueueConfig) -> None:
    """A START whose deadline overflows int64 raised out of the finder (the
    message page's 500) instead of being left out like other bad markers;
    an EXTEND to a time no date holds raised when the story was told."""
    send(queue, 1, partition=0)
    with QueueClient(queue) as client:
        [message] = poll_until(client, 1)
        key = markers.encode_key(0, message.offset)
        hostile = [
            RawRecord(markers.start(-(2**63)), key=key, timestamp=-1),
            RawRecord(b"\x09not a marker", key=key),
            RawRecord(markers.extend(2**63 - 1), key=key),
        ]
        produce_raw(queue.bootstrap_servers, queue.markers_topic, hostile)
        client.ack(message)
        client.flush()
    finder = LifecycleFinder(queue)
    try:
        story = wait_for(
            lambda: (s := finder.find(message.id)) and s.state == "acked" and s, 20, "the ack"
        )
        assert [e.kind for e in story.events] == ["produced", "started", "extended", "acked"]
        assert story.events[2].detail == f"deadline epoch ms {2**63 - 1} (not a date)"
    finally:
        finder.close()
