"""kill -9 a streaming run (driver and JVM) mid-stream: the next run loses nothing."""

import dataclasses
import json
import random
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.pipeline.events import QueueTopics
from tests.chaos import log_tail
from tests.pipeline import scenario
from tests.process import ROOT, kill9, wait_for


def _spawn(kafka: EmbeddedBroker, queue: QueueTopics, tmp: Path) -> subprocess.Popen:
    """Its own session, so a kill takes the JVM that PySpark started with it."""
    args = [kafka.bootstrap_servers, json.dumps(dataclasses.asdict(queue)), tmp / "out", tmp / "cp"]
    with open(tmp / "stream.log", "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.pipeline.run_stream", *map(str, args)],
            cwd=ROOT,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )


def _rows(table: Path) -> list[dict]:
    """The rows of the stream's table so far; none while a batch replaces
    its files (a dynamic partition overwrite deletes the files a reader
    listed a moment before: read again at the next poll)."""
    try:
        return pq.read_table(table).to_pylist() if table.is_dir() else []
    except FileNotFoundError:
        return []


def _facts(out: Path) -> dict[str, dict]:
    return {row["kmq_id"]: row for row in _rows(out / "facts")}


def _minute_zero(out: Path) -> tuple[int, int, int] | None:
    """(produced, acked, redelivered) of the story's first minute."""
    zero = [m for m in _rows(out / "minutes") if m["minute_ms"] == scenario.T]
    return (zero[0]["produced"], zero[0]["acked"], zero[0]["redelivered"]) if zero else None


def test_kill_9_mid_stream_then_restart_loses_and_doubles_nothing(
    kafka: EmbeddedBroker, queue: QueueTopics, tmp_path: Path
) -> None:
    first = scenario.write(kafka.bootstrap_servers, queue, 1)
    run = _spawn(kafka, queue, tmp_path)
    try:
        # A JVM of its own to start beside the suite's: minutes on a busy CI machine.
        wait_for(
            lambda: len(_facts(tmp_path / "out")) == 4,
            240,
            "the first part's 4 facts",
            1,
            evidence=lambda: log_tail(tmp_path / "stream.log"),
        )
        second = scenario.write(kafka.bootstrap_servers, queue, 2)
        time.sleep(random.uniform(0, 2))  # a crash at a random point of the next batch
        kill9(run)
        run = _spawn(kafka, queue, tmp_path)

        def caught_up() -> bool:
            facts = _facts(tmp_path / "out")
            return (
                len(facts) == 7
                and facts[f"{queue.queue}/0/2"]["state"] == "acked"
                and _minute_zero(tmp_path / "out") == (7, 4, 1)
            )

        wait_for(
            caught_up,
            240,
            "all 7 facts and minute 0's counts after the restart",
            1,
            evidence=lambda: log_tail(tmp_path / "stream.log"),
        )
    finally:
        kill9(run)
    log = pq.read_table(tmp_path / "out" / "events").to_pylist()
    distinct = {(e["role"], e["partition"], e["offset"]) for e in log}
    assert len(distinct) == first + second
