"""bench/kmq_throughput.py, small, on the session's broker: every section
reports, so the benchmark cannot rot, and its counts are of what happened
(two marker records per message in kmq's format; one redelivered copy per
dropped ack)."""

from tests.bench.runs import run_bench


def test_a_small_run_reports_every_section(kafka) -> None:
    args = ("--messages", "2000", "--open", "3000", "--accuracy-messages", "500")
    report = run_bench(kafka, "kmq_throughput.py", *args)
    for row in report["throughput"]:
        assert row["marker_records_per_message"] == 2.0, row
        slower = min(row["kmq_client_ack_all_msgs_per_s"], row["tracker_digest_msgs_per_s"])
        assert row["sustained_msgs_per_s"] == slower > 0, row
    tracker = report["tracker"]
    assert tracker["false_redeliveries_after_restart"] == 0, tracker
    assert tracker["open_markers"] == 3000, tracker
    for row in report["redelivery_accuracy"]:
        assert row["redelivered"] == round(500 * row["acks_dropped"]), row
        assert row["error_ms_p99"] >= row["error_ms_p50"] >= 0, row
