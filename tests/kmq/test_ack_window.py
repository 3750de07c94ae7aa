"""AckWindow's timing and grouping, with a writer that records what it is given."""

import threading

from kmqadmin.kmq.client.ack_window import AckWindow
from tests.process import wait_for


class Written:
    def __init__(self, fail_first: int = 0) -> None:
        self.calls: list[tuple[int, list[int]]] = []
        self.fail_first = fail_first
        self.lock = threading.Lock()

    def __call__(self, partition: int, offsets: list[int]) -> None:
        with self.lock:
            if self.fail_first:
                self.fail_first -= 1
                raise BufferError("the producer's queue is full")
            self.calls.append((partition, offsets))


def test_acks_of_one_window_are_written_together_per_partition_without_a_flush() -> None:
    written = Written()
    window = AckWindow(written, window_s=0.2)
    try:
        for offset in (3, 1, 2):
            window.add(0, offset)
        window.add(1, 7)
        wait_for(lambda: len(written.calls) == 2, 5, "the window to close")
        assert sorted(written.calls) == [(0, [3, 1, 2]), (1, [7])]
        window.add(0, 4)  # a later ack opens the next window
        wait_for(lambda: len(written.calls) == 3, 5, "the next window to close")
        assert written.calls[2] == (0, [4])
    finally:
        window.close()


def test_flush_and_close_write_what_is_held_and_close_ends_the_thread() -> None:
    written = Written()
    window = AckWindow(written, window_s=60)
    window.add(2, 5)
    window.flush()
    assert written.calls == [(2, [5])]
    window.add(2, 6)
    window.close()
    assert written.calls == [(2, [5]), (2, [6])]
    assert not any(
        t.name == "kmq-ack-window" and t is window._thread for t in threading.enumerate()
    )


def test_a_write_that_fails_does_not_end_the_window() -> None:
    written = Written(fail_first=1)
    window = AckWindow(written, window_s=0.01)
    try:
        window.add(0, 1)
        wait_for(lambda: written.fail_first == 0, 5, "the first write to fail")
        window.add(0, 2)
        wait_for(lambda: written.calls == [(0, [2])], 5, "the next window's write")
    finally:
        window.close()
