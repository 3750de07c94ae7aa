"""Turning SIGTERM into the same orderly stop as Ctrl-C for foreground commands."""

import signal
import threading
from types import FrameType


def stop_event() -> threading.Event:
    """An event set by SIGINT or SIGTERM; the caller's loop waits on it."""
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    return stop
