"""The services the fuzz suite feeds, each as its own process: a segfault or
an uncaught exception on a hostile record ends that process, and the test
reports it (with the end of its log) instead of dying with it."""

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

from kmqadmin.kmq import QueueConfig
from kmqadmin.scheduler import SchedulerConfig
from tests.chaos import last_json_line
from tests.process import ROOT, kill9


class Child:
    """``python -m module JSON *args``: stderr to ``<log>``, stdout (the
    runners' JSON stats lines) to ``<log>.out``."""

    def __init__(
        self, module: str, config: QueueConfig | SchedulerConfig, log: Path, *args: str
    ) -> None:
        fields = {k: v for k, v in dataclasses.asdict(config).items() if k != "kafka_config"}
        self.name, self.log = module.rsplit(".", 1)[-1], log
        with log.open("ab") as stderr, log.with_suffix(".out").open("ab") as stdout:
            self.process = subprocess.Popen(
                # -X faulthandler: a segfault leaves its Python stack in the log.
                [
                    sys.executable,
                    "-X",
                    "faulthandler",
                    "-m",
                    module,
                    json.dumps(fields, default=sorted),
                    *args,
                ],
                cwd=ROOT,
                stdout=stdout,
                stderr=stderr,
            )

    def problems(self) -> list[str]:
        """Why this service is not well: it ended, or its loop crashed and restarted."""
        if (code := self.process.poll()) is not None:
            return [f"{self.name} died with exit code {code}; its log ends:\n{self.tail()}"]
        stats = last_json_line(self.log.with_suffix(".out")) or {}
        if stats.get("restarts"):
            return [
                f"{self.name} restarted {stats['restarts']} times; its log ends:\n{self.tail()}"
            ]
        return []

    def tail(self, lines: int = 25) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        if self.process.poll() is None:
            kill9(self.process)


def start_services(
    queue: QueueConfig, schedules: SchedulerConfig, logs: Path, acked: Path
) -> list[Child]:
    """The queue's tracker, a scheduler of ``schedules`` and a worker."""
    return [
        Child("tests.kmq.run_tracker", queue, logs / "tracker.log"),
        Child("tests.scheduler.run_scheduler", schedules, logs / "scheduler.log"),
        Child("tests.fuzz.run_worker", queue, logs / "worker.log", str(acked)),
    ]
