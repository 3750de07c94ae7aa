"""AckWindow: acks gathered for a moment and written as one end record per run.

A worker that acks its messages one by one would cost a compact-format
queue an end record per message, as kmq's format does. Acks arriving within
ACK_WINDOW_S of the first are held and written together, one END_RANGE (or
END, for a run of one) per run of consecutive offsets of a partition. A
timer writes them when the window closes, so an ack is never held longer
than that, however long the worker then spends on its next message.
"""

import threading
from collections.abc import Callable

# Short next to any message timeout, long next to a fast worker's ack rate.
ACK_WINDOW_S = 0.005

# Writes a partition's acked offsets (as runs: the writer knows the format).
WriteAcks = Callable[[int, list[int]], None]


class AckWindow:
    def __init__(self, write: WriteAcks, window_s: float = ACK_WINDOW_S) -> None:
        self._write = write
        self._window_s = window_s
        self._lock = threading.Lock()
        self._held: dict[int, list[int]] = {}
        self._timer: threading.Timer | None = None

    def add(self, partition: int, offset: int) -> None:
        with self._lock:
            self._held.setdefault(partition, []).append(offset)
            if self._timer is None:
                self._timer = threading.Timer(self._window_s, self.flush)
                self._timer.daemon = True
                self._timer.start()

    def flush(self) -> None:
        """Writes what is held now (the timer, a poll, flush and close call it)."""
        with self._lock:
            held, self._held = self._held, {}
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            for partition, offsets in held.items():
                self._write(partition, offsets)
