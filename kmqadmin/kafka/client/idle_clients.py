"""Idle clients polled now and then, so what librdkafka says is logged when it happens.

confluent-kafka hands a client's log lines over only when the client is
polled (client_log.py). A client that waits between uses, like an
OffsetReader between two reads, keeps what it had to say during a broker
outage to itself and lets it out at its next use or at its close, minutes
later and stamped with that time: after an outage, `kmq run`'s Ctrl-C
printed a reader's "Connection refused" from a minute before, as if the
shutdown had stopped the broker under a running client.

One daemon thread per process serves every watched client once a second,
while there is one: it ends with the last (a process whose owners all
stopped holds no thread of ours), and the next watch starts another.
Watched clients are held weakly: one that is dropped is no longer served. A
forked child (a Celery pool process) starts with none: the parent's clients
are copies there whose librdkafka threads did not come along.
"""

import os
import threading
import time
import weakref
from typing import Protocol

EVERY_S = 1.0


class Idle(Protocol):
    def serve_idle(self) -> None:
        """Polls the client if nothing else is using it; returns at once if
        something is (it is being polled then)."""


_watched: "weakref.WeakSet[Idle]" = weakref.WeakSet()
_lock = threading.Lock()
_pump: threading.Thread | None = None


def watch(client: Idle) -> None:
    """Serves ``client`` from now on, starting the pump with the first."""
    global _pump
    with _lock:
        _watched.add(client)
        if _pump is None or not _pump.is_alive():  # also one a client's error ended
            _pump = threading.Thread(target=_serve, name="kmq-idle-clients", daemon=True)
            _pump.start()


def unwatch(client: Idle) -> None:
    """``client`` is closed: not served any more."""
    with _lock:
        _watched.discard(client)


def _forget_the_parents() -> None:
    global _lock, _pump
    _watched.clear()
    _lock, _pump = threading.Lock(), None


os.register_at_fork(after_in_child=_forget_the_parents)


def _serve() -> None:
    """Until nothing is watched: the pump is then forgotten under the lock
    a watch takes, so a client watched meanwhile starts the next one."""
    global _pump
    while True:
        time.sleep(EVERY_S)
        with _lock:
            clients = list(_watched)
            if not clients:
                _pump = None
                return
        for client in clients:
            client.serve_idle()
