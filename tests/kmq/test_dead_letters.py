"""DLQ pages against the real broker: a ``since`` page seeks (KIP-33) and
reads at most its cap of records after the seek."""

import pytest

from kmqadmin.kafka.client.clock import now_ms
from kmqadmin.kmq import QueueConfig
from kmqadmin.kmq.readers import dead_letters as module
from kmqadmin.kmq.readers.dead_letters import SCAN_FACTOR, DeadLetters, LetterFilter
from tests.kafka_helpers import count_reads, fill, read_all
from tests.process import wait_for
from tests.raw_produce import RawRecord, produce_raw

OLD = 100_000


def test_a_since_page_seeks_past_older_letters_and_reads_at_most_its_cap(
    queue: QueueConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    since = now_ms() - 60_000
    old = ((b"old %d" % i, since - 3_600_000 + i) for i in range(OLD))
    fill(queue, queue.dlq_topic, [*old, *((b"new %d" % i, since + i) for i in range(1000))])
    handed = count_reads(monkeypatch, module)
    letters = DeadLetters(queue)
    try:
        page = letters.page(0, 10, match=LetterFilter(since_ms=since))
        assert [m.value() for m in page.letters] == [b"new %d" % i for i in range(10)]
        assert page.next_offset == OLD + 10
        assert handed and min(o for _, _, o in handed) == OLD  # no older letter read
        assert len(handed) <= 10 * SCAN_FACTOR

        handed.clear()
        nothing = LetterFilter(since_ms=since, contains=b"matches no letter")
        page = letters.page(0, 10, match=nothing)
        assert (page.letters, page.next_offset) == ([], OLD + 10 * SCAN_FACTOR)  # the cap, spent
        assert sorted(o for _, _, o in handed) == list(range(OLD, OLD + 10 * SCAN_FACTOR))
    finally:
        letters.close()


def test_a_letter_whose_kmq_id_names_a_missing_partition_is_redriven_with_the_rest(
    queue: QueueConfig,
) -> None:
    """Its copy went to partition 2147483647: the flush failed and no letter
    of the batch was redriven, on every retry of the page or the job."""
    forged = f"{queue.topic}/2147483647/0".encode()
    written = [
        RawRecord(b"forged", headers=[(b"kmq-id", forged)]),
        RawRecord(b"plain", headers=[(b"kmq-id", f"{queue.topic}/1/0".encode())]),
    ]
    produce_raw(queue.bootstrap_servers, queue.dlq_topic, written)
    letters = DeadLetters(queue)
    try:
        found = wait_for(lambda: letters.page(0, 10).letters, 20, "the two letters")
        letters.redrive(found)
    finally:
        letters.close()
    back = {r.value(): r.partition() for r in read_all(queue, queue.topic)}
    assert back.keys() == {b"forged", b"plain"} and back[b"plain"] == 1
