"""Delayed redelivery: how long a failed message waits before its next try."""

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff with a cap: the n-th redelivery waits
    ``initial_ms * multiplier ** (n - 1)``, at most ``max_ms``.

    Without one, a message is redelivered as soon as its deadline passes,
    which hammers a dependency that is down; with one, the tracker hands the
    copy to the scheduler to deliver later.
    """

    initial_ms: int = 1000
    multiplier: float = 2.0
    max_ms: int = 300_000

    def __post_init__(self) -> None:
        if self.initial_ms <= 0 or self.max_ms < self.initial_ms:
            raise ValueError("backoff needs 0 < initial_ms <= max_ms")
        if self.multiplier < 1:
            raise ValueError("backoff multiplier must be at least 1")

    def delay_ms(self, redelivery: int) -> int:
        """The wait before redelivery number ``redelivery`` (1 for the first)."""
        exponent = max(0, redelivery - 1)
        # Compared as logarithms: multiplier ** exponent overflows a float long
        # before a redelivery count stops being plausible.
        if exponent * math.log(self.multiplier) >= math.log(self.max_ms / self.initial_ms):
            return self.max_ms
        return round(self.initial_ms * self.multiplier**exponent)
