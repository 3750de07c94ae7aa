"""A small supervisor for `kmq run`: start processes, stop them all together."""

import subprocess
import threading
from types import TracebackType

from django.conf import settings

from kmqadmin.kafka import child


class Children:
    """Child processes that live and die as one: if one exits, the caller stops all."""

    def __init__(self) -> None:
        self._procs: dict[str, subprocess.Popen[bytes]] = {}

    def spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        self._procs[name] = subprocess.Popen(
            argv, cwd=settings.BASE_DIR, stdin=subprocess.DEVNULL, env=env
        )

    def exited(self) -> tuple[str, int] | None:
        """The first child that has exited, with its exit code."""
        for name, proc in self._procs.items():
            code = proc.poll()
            if code is not None:
                return name, code
        return None

    def wait(self, stop: threading.Event) -> tuple[str, int] | None:
        """Block until a child exits (returned) or ``stop`` is set (None)."""
        while not stop.wait(0.5):
            if (gone := self.exited()) is not None:
                return gone
        return None

    def stop(self, grace: float = 10.0) -> None:
        child.stop(*self._procs.values(), grace=grace)

    def __enter__(self) -> "Children":
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
