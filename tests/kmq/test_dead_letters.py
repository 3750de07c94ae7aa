"""DLQ pages against the real broker: a ``since`` page seeks (KIP-33) and
reads at most its cap of records after the seek."""

import pytest

from kmqadmin.kafka.clock import now_ms
from kmqadmin.kmq import QueueConfig
from kmqadmin.kmq import dead_letters as module
from kmqadmin.kmq.dead_letters import SCAN_FACTOR, DeadLetters, LetterFilter
from tests.kafka_helpers import count_reads, fill

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
