"""Lateness: how late schedules fired, as cumulative histogram buckets.

A plain counter array rather than a Prometheus histogram, so the scheduler
core needs no metrics library and a fire costs one bisect and one list
increment; the workers turn ``snapshot()`` into ``kmqadmin_schedule_lateness_seconds``
when scraped. Written by the scheduler's loop, read from any thread: a read
may see one fire in the count but not yet in the sum, which a scrape
tolerates.
"""

from bisect import bisect_left
from dataclasses import dataclass

from kmqadmin.kafka.client.clock import to_ms, to_s

# Upper bounds in seconds: a healthy scheduler fires within tens of ms; the
# tail shows a scheduler that was down or lagging.
BOUNDS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


def bucket_keys() -> list[str]:
    """Each bucket's bound as text ("+Inf" last): how a row of counts per
    bucket names them, so it stays readable if the bounds change."""
    return [*(f"{bound:g}" for bound in BOUNDS_S), "+Inf"]


@dataclass(frozen=True, slots=True)
class LatenessSnapshot:
    buckets: tuple[tuple[float, int], ...]  # (upper bound s, count at or below), +Inf last
    sum_s: float

    @property
    def count(self) -> int:
        return self.buckets[-1][1]


class Lateness:
    def __init__(self) -> None:
        self._bounds_ms = [to_ms(b) for b in BOUNDS_S]
        self._counts = [0] * (len(BOUNDS_S) + 1)
        self._sum_ms = 0

    def observe(self, late_ms: int) -> None:
        """One fire, ``late_ms`` after its due time (early counts as on time)."""
        late_ms = max(0, late_ms)
        self._counts[bisect_left(self._bounds_ms, late_ms)] += 1
        self._sum_ms += late_ms

    def snapshot(self) -> LatenessSnapshot:
        counts, total, cumulative = list(self._counts), self._sum_ms, []
        running = 0
        for bound, count in zip((*BOUNDS_S, float("inf")), counts, strict=True):
            running += count
            cumulative.append((bound, running))
        return LatenessSnapshot(tuple(cumulative), to_s(total))
