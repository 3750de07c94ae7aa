"""bench/queues.py --quick on the session's broker: every system in every
section, with figures a working run gives, so the benchmark cannot rot."""

from tests.bench.runs import run_bench

SYSTEMS = {
    "plain_group",
    "kmq_each",
    "kmq_batch",
    "share_each",
    "share_batch",
    "share_batch_optimized",
    "share_consumer",
}
SHAPES = {"4p_100B_1c", "4p_100B_4c"}  # --quick: one topic and record size, 1 and 4 consumers


def test_quick_run_reports_every_system(kafka) -> None:
    report = run_bench(kafka, "queues.py", "--quick")["queues"]
    settings = report["settings"]

    rows = report["throughput"]
    assert {f"{r['partitions']}p_{r['size']}B_{r['consumers']}c" for r in rows} == SHAPES
    for row in rows:
        assert set(row["msgs_per_s"]) == SYSTEMS
        assert all(rate > 0 for rate in row["msgs_per_s"].values()), row

    ratios = report["ratios"]
    assert set(ratios["share_vs_share_consumer"]) == SHAPES
    for pair in ratios["share_vs_share_consumer"].values():
        assert set(pair) == {"share_each", "share_batch", "share_batch_optimized"}
        assert all(r > 0 for r in pair.values())
    assert set(ratios["kmq_vs_share_consumer_one_consumer_per_partition"]) == {"4p_100B_4c"}
    assert set(ratios["kmq_io_floor_msgs_per_s"]) == {"kmq_each", "kmq_batch"}
    assert all(rate > 0 for rate in ratios["kmq_io_floor_msgs_per_s"].values())
    assert set(ratios["kmq_vs_io_floor"]) == {"kmq_each", "kmq_batch"}

    latency = report["latency"]
    rate = latency["msgs_per_s"]
    assert rate == min(rows[0]["msgs_per_s"].values()) // 2
    hol = report["head_of_line"]
    hol_rate = hol["latency_at_msgs_per_s"]
    assert hol_rate == min(f["msgs_per_s"] for f in hol["systems"].values()) // 2
    for figures, at in [
        *((f, rate) for f in latency["systems"].values()),
        *((f, hol_rate) for f in hol["systems"].values()),
    ]:
        # Each record produced in the measured phase acknowledged once, no more.
        assert figures["messages"] == round(at * settings["latency_s"]), figures
        assert 0 < figures["p50_ms"] <= figures["p99_ms"], figures
    assert set(latency["systems"]) == set(hol["systems"]) == SYSTEMS
    assert all(f["msgs_per_s"] > 0 for f in hol["systems"].values())
    # A plain group cannot commit past a slow record: besides the slow 1 %
    # (--quick: one in 100), the records just behind one wait about as long.
    assert hol["systems"]["plain_group"]["p99_ms"] > 0.9 * settings["slow_ms"]

    [slow] = report["slow_work"]  # --quick: one case
    assert set(slow["systems"]) == {"kmq_each", "share_each", "share_consumer"}
    ours = slow["systems"]["share_each"]
    assert (ours["duplicates"], ours["not_acked"], ours["dead_letters"]) == (0, 0, 0), ours
    assert all(f["msgs_per_s"] > 0 for f in slow["systems"].values())
