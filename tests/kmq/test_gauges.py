"""QueueGauges answer from offsets, and from memory within max_age_s."""

from kmqadmin.kmq import QueueConfig, QueueGauges
from tests.process import wait_for
from tests.queue_helpers import send


def test_answers_are_kept_for_max_age_then_read_again(queue: QueueConfig) -> None:
    kept, fresh = QueueGauges(queue, max_age_s=3600), QueueGauges(queue, max_age_s=0)
    try:
        assert kept.depth() == 0
        send(queue, 3)
        wait_for(lambda: fresh.depth() == 3, 20, "messages waiting, read afresh")
        assert kept.depth() == 0  # still the answer of an hour's lifetime
    finally:
        kept.close()
        fresh.close()
