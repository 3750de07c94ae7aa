"""bench/kmq_throughput.py, small, on the session's broker: every section
reports, on both marker formats, so the benchmark cannot rot, and its counts
are of what happened (two marker records per message in kmq's format, a few
per batch in the compact one; one redelivered copy per dropped ack)."""

from tests.bench.runs import run_bench


def test_a_small_run_reports_every_section(kafka) -> None:
    args = ("--messages", "2000", "--repeats", "1", "--settle-s", "0")
    args += ("--open", "3000", "--accuracy-messages", "500")
    args += ("--accuracy-timeout-ms", "1000")  # four runs, each waiting out the timeout
    report = run_bench(kafka, "kmq_throughput.py", *args)
    for row in report["throughput"]:
        kmq, compact = row["marker_formats"]["kmq"], row["marker_formats"]["compact"]
        assert kmq["marker_records_per_message"] == 2.0, row
        assert 0 < compact["marker_records_per_message"] <= 0.05, row
        for fmt in (kmq, compact):
            slower = min(fmt["client_ack_all_msgs_per_s"], fmt["tracker_digest_msgs_per_s"])
            assert fmt["sustained_msgs_per_s"] == slower > 0, row
    assert [t["marker_format"] for t in report["tracker"]] == ["compact", "kmq"]
    for tracker in report["tracker"]:
        assert tracker["false_redeliveries_after_restart"] == 0, tracker
        assert tracker["open_deliveries"] == 3000, tracker
    assert len(report["redelivery_accuracy"]) == 4
    for row in report["redelivery_accuracy"]:
        assert row["redelivered"] == round(500 * row["acks_dropped"]), row
        assert row["error_ms_p99"] >= row["error_ms_p50"] >= 0, row
