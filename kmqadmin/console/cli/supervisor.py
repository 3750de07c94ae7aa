"""`kmq run`'s supervisor: its children live on their own, and one that exits
is started again.

A child that exits is a reason to restart it, never to stop the others: a
broker that stalls makes the demo traffic fail, a broker that dies takes
nothing else down, and the web keeps answering (503 while Kafka is away)
through both. Restarts wait the services' pause
(kafka/ownership/restart_pause.py), so a child that cannot start does not
spin. Only the stop event (Ctrl-C, SIGTERM) or a child exiting with EX_CONFIG
(a setting is wrong: every restart would fail the same way; the commands run
through manage.py, the demo traffic, exit so) ends the run.
"""

import logging
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType

from django.conf import settings

from kmqadmin.kafka.embedded import child
from kmqadmin.kafka.ownership.restart_pause import RestartPause

log = logging.getLogger("kmqadmin.run")

# The exit code of a process whose configuration is wrong (sysexits.h);
# manage.py exits with it on ImproperlyConfigured.
EX_CONFIG = 78
# The embedded broker's name among the children: stopped last.
BROKER = "kafka"


class MisconfiguredChild(Exception):
    """A child exited with EX_CONFIG: restarting it would fail the same way."""


@dataclass
class Child:
    """One supervised process: ``start`` launches it and returns the process."""

    name: str
    start: Callable[[], subprocess.Popen]
    process: subprocess.Popen | None = None
    started_at: float = 0.0
    pause: RestartPause = field(default_factory=RestartPause)
    restart_at: float | None = None
    exits: list[int] = field(default_factory=list)

    def launch(self) -> None:
        self.process, self.started_at, self.restart_at = self.start(), time.monotonic(), None


class Supervisor:
    """Starts children, restarts the ones that exit, stops them all together."""

    def __init__(self) -> None:
        self._children: dict[str, Child] = {}

    def spawn(
        self,
        name: str,
        argv: list[str],
        env: dict[str, str] | None = None,
        before_each: Callable[[], None] = lambda: None,
    ) -> None:
        """A command line, started now in the project's folder; ``before_each``
        runs before every start (a restart clears what the last life left)."""

        def start() -> subprocess.Popen:
            before_each()
            return _popen(argv, env)

        self.adopt(name, start)

    def adopt(
        self,
        name: str,
        start: Callable[[], subprocess.Popen],
        running: subprocess.Popen | None = None,
    ) -> None:
        """A child ``start`` launches again whenever it exits; ``running``: its
        process, already started by the caller (the embedded broker)."""
        supervised = self._children[name] = Child(name, start)
        if running is None:
            supervised.launch()
        else:
            supervised.process, supervised.started_at = running, time.monotonic()

    def process(self, name: str) -> subprocess.Popen | None:
        """``name``'s current life (None while it waits to restart)."""
        supervised = self._children[name]
        return None if supervised.restart_at is not None else supervised.process

    def exits(self, name: str) -> list[int]:
        """The exit codes of ``name``'s ended lives, oldest first."""
        return list(self._children[name].exits)

    def check(self) -> None:
        """Reaps children that exited, logs each exit and restarts those whose
        pause is over; MisconfiguredChild if one exited with EX_CONFIG."""
        now = time.monotonic()
        for supervised in self._children.values():
            if supervised.restart_at is not None:
                if now >= supervised.restart_at:
                    self._restart(supervised)
                continue
            code = supervised.process.poll() if supervised.process else None
            if code is None:
                continue
            supervised.exits.append(code)
            if code == EX_CONFIG:
                raise MisconfiguredChild(f"{supervised.name} exited: a setting is wrong (above)")
            ran = now - supervised.started_at
            wait_s = supervised.pause.after(ran)
            supervised.restart_at = now + wait_s
            log.warning(
                "%s exited with code %s after %.0f s; restarting in %.0f s",
                supervised.name,
                code,
                ran,
                wait_s,
            )

    def _restart(self, supervised: Child) -> None:
        try:
            supervised.launch()
        except Exception as exc:  # a broker whose port is still held: try again later
            wait_s = supervised.pause.again()
            supervised.restart_at = time.monotonic() + wait_s
            log.warning(
                "%s did not start (%s); trying again in %.0f s", supervised.name, exc, wait_s
            )
        else:
            log.warning("%s restarted", supervised.name)

    def supervise(self, stop: threading.Event, every_s: float = 0.5) -> None:
        """Until ``stop`` is set; raises MisconfiguredChild."""
        while not stop.wait(every_s):
            self.check()

    def stop(self, grace: float = 9.0, broker_grace: float = 5.0) -> None:
        """SIGTERM to every child but the broker at once, SIGKILL to what
        outlives ``grace``; then the broker, so its clients leave their groups
        and flush while it still answers. Both fit in Ctrl-C's 15 s. A Celery
        worker's warm shutdown takes 6 s on a busy 2-core machine (its loop
        and pool threads wake once a second or two); a broker stops in 2."""
        processes = {c.name: c.process for c in self._children.values() if c.process}
        broker = processes.pop(BROKER, None)
        self._killed(child.stop(*processes.values(), grace=grace), grace)
        self._killed(child.stop(*([broker] if broker else []), grace=broker_grace), broker_grace)

    def _killed(self, processes: list[subprocess.Popen], grace: float) -> None:
        names = {c.process: c.name for c in self._children.values()}
        for process in processes:
            log.warning("%s did not stop within %.0f s; killed", names[process], grace)

    def __enter__(self) -> "Supervisor":
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _popen(argv: list[str], env: dict[str, str] | None) -> subprocess.Popen:
    """A child in a process group of its own (child.OWN_GROUP)."""
    return subprocess.Popen(
        argv,
        cwd=settings.BASE_DIR,
        stdin=subprocess.DEVNULL,
        env=env,
        preexec_fn=child.die_with_parent,
        process_group=child.OWN_GROUP,
    )
