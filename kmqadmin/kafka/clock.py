"""Epoch milliseconds, the unit of every deadline on the wire."""

import time


def now_ms() -> int:
    return int(time.time() * 1000)
