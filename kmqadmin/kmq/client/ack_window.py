"""AckWindow: acks gathered for a moment and written as one end record per run.

A worker that acks its messages one by one would cost a compact-format
queue an end record per message, as kmq's format does. Acks arriving within
ACK_WINDOW_S of the first are held and written together, one END_RANGE (or
END, for a run of one) per run of consecutive offsets of a partition. A
thread of the window's own writes them when the window closes, so an ack is
never held longer than that, however long the worker then spends on its
next message; one thread for the client's life, since starting one per
window would cost more than the writes it saves.
"""

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

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
        self._opened = threading.Event()  # set by the first ack of a window
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kmq-ack-window", daemon=True)
        self._thread.start()

    def add(self, partition: int, offset: int) -> None:
        with self._lock:
            first = not self._held
            self._held.setdefault(partition, []).append(offset)
        if first:
            self._opened.set()

    def flush(self) -> None:
        """Writes what is held now (the window's thread, flush and close call it)."""
        with self._lock:
            held, self._held = self._held, {}
            for partition, offsets in held.items():
                self._write(partition, offsets)

    def close(self) -> None:
        """Writes what is held and ends the window's thread."""
        self._closing.set()
        while self._thread.is_alive():  # woken again, should it clear the first wake-up
            self._opened.set()
            self._thread.join(0.01)
        self.flush()

    def _run(self) -> None:
        while not self._closing.is_set():
            self._opened.wait()
            self._closing.wait(self._window_s)
            self._opened.clear()  # before taking what is held: a later ack opens the next
            try:
                self.flush()
            except Exception:  # the window goes on; those messages are redelivered
                log.exception("acks not written")
