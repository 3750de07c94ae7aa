"""Killing a service process again and again at random points in its work.

The crash tests run with KMQ_CHAOS_KILLS kills (20 in `make test`, 300 or
more in `make chaos`) and print what they counted, so a long run reports
the same figures a short one asserts.
"""

import json
import os
import random
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from confluent_kafka import IsolationLevel, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from kmqadmin.kafka.admin.topics import admin_client
from tests.process import kill9

KILLS = int(os.environ.get("KMQ_CHAOS_KILLS", "20"))


class Victim:
    """One service process, respawned after each kill -9.

    A kill lands at a random point after the process logged ``ready`` (it
    owns partitions and works), never while it is still joining the group:
    a kill before that tests nothing but start-up.
    """

    def __init__(
        self,
        spawn: Callable[[Path], subprocess.Popen],
        log: Path,
        ready: str,
        seed: int,
        work_s: tuple[float, float] = (0.0, 3.0),
    ) -> None:
        self._spawn, self._log, self._ready = spawn, log, ready
        self._rng = random.Random(seed)
        self._work_s = work_s
        self.kills = 0
        self._start()

    def step(self, wanted: int) -> None:
        """Called from the test's polling loop: kills when the time has come."""
        if self.kills >= wanted:
            return
        if self._kill_at is None:
            if self._ready in log_since(self._log, self._from):
                self._kill_at = time.monotonic() + self._rng.uniform(*self._work_s)
            return
        if time.monotonic() >= self._kill_at:
            kill9(self.process)
            self.kills += 1
            self._start()

    def stop(self) -> None:
        kill9(self.process)

    def log_tail(self, lines: int = 30) -> str:
        return log_tail(self._log, lines)

    def _start(self) -> None:
        self._from = self._log.stat().st_size if self._log.exists() else 0
        self._kill_at: float | None = None
        self.process = self._spawn(self._log)


def report(test: str, **counts: int) -> None:
    """One JSON line the chaos run prints (pytest -s shows it)."""
    print(json.dumps({"test": test, **counts}))


def last_json_line(path: Path) -> dict | None:
    """The last whole JSON line a process printed to ``path`` (it may be
    writing the next one as we read)."""
    if not path.exists():
        return None
    lines = path.read_text().split("\n")[:-1]  # after the last newline: unfinished
    return json.loads(lines[-1]) if lines else None


def log_tail(log: Path, lines: int = 40) -> str:
    """The last ``lines`` of a process's log, to tell why a wait on it failed."""
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def log_since(log: Path, position: int) -> str:
    """What a process logged after ``position`` (a size taken earlier)."""
    with log.open("rb") as f:
        f.seek(position)
        return f.read().decode(errors="replace")


def end_offsets(
    admin: AdminClient, topic: str, partitions: int, level: IsolationLevel
) -> dict[int, int]:
    """Each partition's end as a reader at ``level`` sees it: for
    read_committed, the last stable offset."""
    latest = {TopicPartition(topic, p): OffsetSpec.latest() for p in range(partitions)}
    answers = admin.list_offsets(latest, isolation_level=level, request_timeout=5)
    return {tp.partition: f.result().offset for tp, f in answers.items()}


def open_transaction(admin: AdminClient, topic: str, partitions: int) -> bool:
    """Whether some transaction on ``topic`` is open: its last stable offset
    (what read_committed readers may read up to) is short of its end."""
    return end_offsets(admin, topic, partitions, IsolationLevel.READ_COMMITTED) != end_offsets(
        admin, topic, partitions, IsolationLevel.READ_UNCOMMITTED
    )


def pause_mid_transaction(
    process: subprocess.Popen,
    bootstrap: str,
    topic: str,
    partitions: int,
    timeout: float = 60,
    meanwhile: Callable[[], object] = lambda: None,
) -> None:
    """SIGSTOP ``process`` while a transaction of its on ``topic`` is open,
    checked again once it is stopped: a zombie caught there goes on with
    that transaction when resumed, which is what fencing must refuse. A
    process stopped anywhere else hears of the rebalance first and tests
    nothing. ``meanwhile`` runs between looks: what keeps the process busy
    (a tracker has transactions to open only while a worker takes messages)."""
    admin = admin_client(bootstrap)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        meanwhile()
        if open_transaction(admin, topic, partitions):
            os.kill(process.pid, signal.SIGSTOP)
            if _stays_open(admin, topic, partitions):
                return
            os.kill(process.pid, signal.SIGCONT)
    raise AssertionError(f"no open transaction on {topic} to stop the process in")


def _stays_open(admin: AdminClient, topic: str, partitions: int) -> bool:
    """Open on three looks over 0.2 s: a process stopped just after sending
    its commit would see that commit complete (the broker needs no more of
    it), and go on as if never paused. Not a wait for a condition: the stopped
    process can change nothing, so the look spans a fixed time."""
    for _ in range(3):
        if not open_transaction(admin, topic, partitions):
            return False
        time.sleep(0.1)
    return open_transaction(admin, topic, partitions)
