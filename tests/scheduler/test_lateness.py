"""Lateness: the fire-lateness histogram the scheduler keeps without a metrics library."""

from kmqadmin.scheduler.lateness import BOUNDS_S, Lateness


def test_buckets_are_cumulative_and_bounds_inclusive_as_prometheus_reads_them() -> None:
    lateness = Lateness()
    for late_ms in (0, 5, 6, 1_000, 400_000, -20):  # early counts as on time
        lateness.observe(late_ms)
    snapshot = lateness.snapshot()
    counts = dict(snapshot.buckets)
    assert counts[0.005] == 3  # 0, 5 (on the bound) and the early one
    assert counts[0.01] == 4
    assert counts[1.0] == 5
    assert counts[300.0] == 5
    assert counts[float("inf")] == snapshot.count == 6
    assert [b for b, _ in snapshot.buckets] == [*BOUNDS_S, float("inf")]
    assert snapshot.sum_s == (5 + 6 + 1_000 + 400_000) / 1000
