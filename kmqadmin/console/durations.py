"""Durations as a person reads them: "12 s", "5 min", "3 days", "973 years".

One function for every duration and deadline the console shows. Pure integer
arithmetic: a deadline far in the future (a schedule due in the year 2990, a
corrupt marker near 2**63 ms) has no datetime to overflow.
"""

# (unit, milliseconds in one, shown while the count stays below this)
_UNITS = (
    ("ms", 1, 1_000),
    ("s", 1_000, 120),
    ("min", 60_000, 120),
    ("h", 3_600_000, 48),
    ("day", 86_400_000, 730),
)
_YEAR_MS = 31_556_952_000  # the Gregorian year's average, 365.2425 days
_WORDS = frozenset({"day", "year"})  # spelled out, so they take a plural


def duration(ms: int) -> str:
    """The length of ``ms`` (its sign ignored) in the largest unit that
    keeps the count readable, rounded down."""
    ms = abs(int(ms))
    for unit, size, below in _UNITS:
        if ms // size < below:
            return _count(ms // size, unit)
    return _count(ms // _YEAR_MS, "year")


def relative(delta_ms: int) -> str:
    """A moment ``delta_ms`` away from now: "in 3 min" ahead, "3 min ago" past."""
    return f"in {duration(delta_ms)}" if delta_ms >= 0 else f"{duration(delta_ms)} ago"


def _count(n: int, unit: str) -> str:
    plural = "s" if unit in _WORDS and n != 1 else ""
    return f"{n:,} {unit}{plural}"
