"""bench/delayed_retry.py, small, on the session's broker: every copy comes
back once, late by a figure a working run gives, so the benchmark cannot rot."""

from tests.bench.runs import run_bench


def test_a_small_run_brings_every_copy_back_after_its_backoff(kafka) -> None:
    report = run_bench(kafka, "delayed_retry.py", "--messages", "20", "--backoff-ms", "500")
    retry = report["delayed_retry"]
    assert (retry["messages"], retry["backoff_ms"], retry["target_p99_ms"]) == (20, 500, 100)
    plain, late = retry["plain_share_delivery"], retry["retry_lateness"]
    assert 0 < plain["p50_ms"] <= plain["p99_ms"], plain
    # Never before the backoff has passed (1 ms: deadlines are whole epoch ms).
    assert -1 <= late["min_ms"] <= late["p50_ms"] <= late["p99_ms"], late
    assert retry["of_which_until_fired"]["p99_ms"] <= late["p99_ms"], retry
