"""bench/console.py on a small queue and the session's broker: every page
answers and is timed, and the viewers are pushed to, so the benchmark
cannot rot."""

from tests.bench.runs import run_bench

PAGES = {
    "dashboard",
    "queue",
    "dlq",
    "dlq_filtered",
    "message",
    "in_flight_api",
    "browser_seek_by_time",
    "browser_jsonpath",
}


def test_a_small_run_times_every_page_and_pushes_to_every_viewer(kafka) -> None:
    args = ["--records", "3000", "--in-flight", "500", "--dead", "500", "--requests", "3"]
    report = run_bench(kafka, "console.py", *args, "--viewers", "5", "--watch-s", "3", timeout=240)[
        "console"
    ]
    assert set(report["pages"]) == PAGES
    for name, times in report["pages"].items():
        assert 0 < times["p50_ms"] <= times["p95_ms"], (name, times)
    assert report["pages_over_target"] == [
        name for name, t in report["pages"].items() if t["p95_ms"] > 200
    ]
    push = report["live_push"]
    assert push["one_viewer"]["frames_per_viewer"] >= 1, push
    assert push["5_viewers"]["frames_per_viewer"] >= 1, push
    assert push["cpu_ratio"] is None or push["cpu_ratio"] > 0
