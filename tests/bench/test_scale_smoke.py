"""bench/scale.py, small, on the session's broker: every figure a working run
gives, so the benchmark cannot rot, and what an owner holds does not grow
with its partitions (one producer per owner, not one per partition)."""

from tests.bench.runs import run_bench


def test_a_small_run_reports_every_figure_and_partitions_cost_no_threads(kafka) -> None:
    args = ("--queues", "2", "--partitions", "3,12", "--settle", "200", "--rounds", "1")
    report = run_bench(kafka, "scale.py", *args)
    few, many = (row["trackers"] for row in report["scale"])
    for shape in (few, many):
        assert shape["owned_s"] is not None and shape["restarts"] == 0, shape
        assert shape["settle"] == {
            "messages": 200,
            "acked": 200,
            "in_flight": 0,
            "redelivered": 0,
            "settled_s": shape["settle"]["settled_s"],
        }
        assert shape["threads_left"] == 0 and shape["sockets_left"] == 0, shape
    # A producer per partition would add threads per partition (librdkafka
    # runs one per broker connection and more); a socket opens when a client
    # first talks to a broker, so their count depends on when it is taken.
    assert many["threads"] == few["threads"], (few, many)
    recovery = report["recovery"]
    for case in (*recovery["per_partition"].values(), *recovery["per_owner"].values()):
        assert len(case) == 1 and case[0] > 0, recovery
