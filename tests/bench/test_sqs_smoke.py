"""bench/sqs.py on a few hundred messages and the session's broker: both
servers are driven through every phase, every message is received once
and deleted, and the ratios and targets are computed from the figures
printed beside them, so the benchmark cannot rot."""

import os

import pytest

from tests.bench.runs import run_bench

SERVER_FIGURES = {
    "msgs_per_s",
    "send_batch_msgs_per_s",
    "receive_delete_msgs_per_s",
    "receive_found",
    "delete_batch",
    "empty_receives",
    "received",
    "duplicates",
    "server_cpu_ms_per_msg",
    "server_side_cpu_ms_per_msg",
    "client_cpu_ms_per_msg",
    "cores_busy",
}
MESSAGES, CLIENTS = 200, 2


def test_a_small_run_drives_both_servers_and_compares_them(kafka) -> None:
    args = ["--messages", str(MESSAGES), "--clients", str(CLIENTS), "--warmup", "20"]
    report = run_bench(kafka, "sqs.py", *args, "--rest-messages", "20", timeout=300)["sqs"]
    assert report["servers"]["peer"].startswith("ElasticMQ 1.")
    ours, peer = report["ours"], report["peer"]
    for figures in (ours, peer):
        assert set(figures) == SERVER_FIGURES
        assert figures["received"] == MESSAGES and figures["duplicates"] == 0, figures
        assert 0 < figures["msgs_per_s"] <= figures["send_batch_msgs_per_s"], figures
        assert figures["msgs_per_s"] <= figures["receive_delete_msgs_per_s"], figures
        found = figures["receive_found"]
        assert 0 < found["p50_ms"] <= found["p99_ms"], found
        assert found["calls"] * found["msgs_per_call"] == pytest.approx(MESSAGES, abs=0.5)
        deletes = figures["delete_batch"]
        assert deletes["calls"] == found["calls"] and 0 < deletes["p50_ms"] <= deletes["p99_ms"]
        assert 0 < figures["server_cpu_ms_per_msg"] <= figures["server_side_cpu_ms_per_msg"]
        assert figures["client_cpu_ms_per_msg"] > 0, figures
        # The machine's CPU (other tests' too, beside this one) over the
        # phases: never more than its cores, but for the kernel counting CPU
        # in hundredths of a second per core, over phases of tenths here.
        assert 0 < figures["cores_busy"] <= os.cpu_count() + 0.5, figures
    ratios = report["ratios_ours_over_peer"]
    assert ratios["msgs_per_s"] == pytest.approx(ours["msgs_per_s"] / peer["msgs_per_s"], abs=0.01)
    p99 = ours["receive_found"]["p99_ms"]
    assert ratios["receive_p99_ms"] == pytest.approx(
        p99 / peer["receive_found"]["p99_ms"], abs=0.01
    )
    targets = report["targets"]
    assert targets["receive_p99_under_ms"]["pass"] == (p99 < 50)
    assert targets["msgs_per_s_at_least_peer"]["pass"] == (ours["msgs_per_s"] >= peer["msgs_per_s"])
    rest = report["rest_baseline"]
    assert rest["messages"] == 20
    assert rest["rest_enqueue_msgs_per_s"] > 0 and rest["sqs_send_message_msgs_per_s"] > 0
