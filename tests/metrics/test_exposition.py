"""Metrics files of ended processes: a restarted service's live gauges."""

import subprocess
import sys
from pathlib import Path

from prometheus_client import CollectorRegistry
from prometheus_client.multiprocess import MultiProcessCollector

from kmqadmin.metrics.exposition import MULTIPROC_DIR, forget_dead_processes

# A process that holds two WebSockets open and a counter of three, then ends
# without saying so (kill -9 of a web process looks the same on disk).
WRITER = """
from prometheus_client import Counter, Gauge
Gauge("open", "open now", multiprocess_mode="livesum").set(2)
Counter("accepted", "accepted").inc(3)
"""


def served(folder: Path) -> dict[str, float]:
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(folder))
    return {s.name: s.value for metric in registry.collect() for s in metric.samples}


def test_a_restart_stops_counting_the_last_lifes_live_gauges_and_keeps_its_counters(
    tmp_path: Path,
) -> None:
    for _ in range(2):  # two lives of one service, both ended
        env = {MULTIPROC_DIR: str(tmp_path), "PATH": ""}
        subprocess.run([sys.executable, "-c", WRITER], env=env, check=True)
    assert served(tmp_path) == {"open": 4.0, "accepted_total": 6.0}
    forget_dead_processes(str(tmp_path))
    assert served(tmp_path) == {"accepted_total": 6.0}
