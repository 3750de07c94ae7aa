"""Helpers for tests that run the product's own commands as real processes."""

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Variables the suite itself may set; a subprocess test states its own.
# KMQ_DATA_DIR is kept: the suite's (tests/data_dir.py) unless a test gives
# one. The product's processes run the product's settings, not the suite's.
_CONFIG_VARS = (
    "KAFKA_BOOTSTRAP_SERVERS",
    "DATABASE_URL",
    "REDIS_URL",
    "LOG_LEVEL",
    "DJANGO_SETTINGS_MODULE",
    # tests/data_dir.py's note to pytest-xdist's workers; a suite a test runs
    # takes its developer's dir from KMQ_DATA_DIR, as a developer's does.
    "KMQ_TESTS_DEVELOPERS_DATA_DIR",
)


def env(**overrides: str) -> dict[str, str]:
    """The current environment minus kmqadmin's configuration, plus ``overrides``."""
    base = {k: v for k, v in os.environ.items() if k not in _CONFIG_VARS}
    return base | overrides


def manage(*args: str, timeout: float = 60, **overrides: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env(**overrides),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def spawn(argv: list[str], log: Path, **settings: str) -> subprocess.Popen:
    """``argv`` as a child on ``settings``, its output appended to ``log``
    (read it to tell why the child did what it did)."""
    with open(log, "ab") as out:
        return subprocess.Popen(
            argv, cwd=ROOT, env=env(**settings), stdout=out, stderr=subprocess.STDOUT
        )


def celery_worker(*options: str) -> list[str]:
    """A kmqadmin Celery worker's command line, with ``options``."""
    return [sys.executable, "-m", "celery", "-A", "kmqadmin", "worker", *options]


def wait_for[T](
    condition: Callable[[], T],
    timeout: float,
    what: str,
    every: float = 0.1,
    evidence: Callable[[], str] | None = None,
) -> T:
    """Poll ``condition`` until it returns something truthy; fail naming
    ``what``, with ``evidence`` (say, the end of a process's log) to tell why."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := condition():
            return result
        time.sleep(every)
    told = f"\n{evidence()}" if evidence else ""
    raise AssertionError(f"timed out after {timeout} s waiting for {what}{told}")


def kill9(proc: subprocess.Popen) -> None:
    """SIGKILL: no cleanup, no flush, no leaving the group, as in a crash.

    A child started in a session of its own is killed with its whole
    process group (PySpark's JVM with the driver that started it)."""
    if os.getpgid(proc.pid) == proc.pid:
        os.killpg(proc.pid, signal.SIGKILL)
    else:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


class Run:
    """`manage.py kmq run ...` as a child, its output collected as it comes."""

    def __init__(self, *args: str, **settings: str) -> None:
        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "kmq", "run", *args],
            cwd=ROOT,
            env=env(**settings),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            process_group=0,  # a terminal's foreground group, for ctrl_c()
        )
        threading.Thread(target=lambda: self.lines.extend(self.proc.stdout), daemon=True).start()

    def up(self, timeout: float = 120) -> tuple[str, str, str]:
        """Waits for the 'kmqadmin is up' banner: (url, user, password)."""
        banner = wait_for(
            lambda: next((line for line in list(self.lines) if "kmqadmin is up" in line), None),
            timeout,
            "the 'kmqadmin is up' banner",
        )
        return re.search(r"(http://\S+)\s+\(log in as (\S+) / (\S+)\)", banner).groups()

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=60)

    def ctrl_c(self) -> None:
        """What a terminal does on Ctrl-C: SIGINT to its whole foreground
        process group, every process in it that did not leave it."""
        os.killpg(self.proc.pid, signal.SIGINT)
