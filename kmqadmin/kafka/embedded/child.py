"""Child processes we start and must not leave behind: the embedded broker,
the test schema registry, `kmq run`'s web and worker."""

import contextlib
import ctypes
import signal
import subprocess
import time

_PR_SET_PDEATHSIG = 1
# Popen's process_group: a group of the child's own. A terminal's Ctrl-C goes
# to its whole foreground group; the children must not get it, or the broker
# stops at once beside its clients (they log "Connection refused" while they
# shut down) and Celery prints its "Hitting Ctrl+C again" lines. Our process
# stops them, the broker last.
OWN_GROUP = 0


def die_with_parent() -> None:
    """A ``preexec_fn``: a kill -9 of our process must not leave the child running."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def stop(*processes: subprocess.Popen[bytes], grace: float = 10.0) -> list[subprocess.Popen[bytes]]:
    """SIGTERM to all at once, so each shuts down cleanly (a broker flushes
    its log) in parallel with the others; SIGKILL whichever outlives ``grace``,
    counted from the SIGTERM, so stopping many takes ``grace`` at most.
    Returns the ones killed: they did not stop cleanly."""
    running = [p for p in processes if p.poll() is None]
    for process in running:
        process.terminate()
    deadline = time.monotonic() + grace
    killed = []
    for process in running:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            killed.append(process)
    return killed
