"""Running a benchmark script as its users do, on the session's broker."""

import json
import subprocess
import sys

from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from tests.process import ROOT, env


def run_bench(kafka: EmbeddedBroker, script: str, *args: str, timeout: float = 420) -> dict:
    """``bench/<script>`` run with ``args`` against ``kafka``; its JSON report."""
    done = subprocess.run(
        [sys.executable, f"bench/{script}", *args],
        cwd=ROOT,
        env=env(KAFKA_BOOTSTRAP_SERVERS=kafka.bootstrap_servers),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)
