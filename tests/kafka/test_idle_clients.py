"""idle_clients: a pump that polls idle clients, never a forked parent's."""

import os
import threading

import pytest

from kmqadmin.kafka.client import idle_clients
from tests.process import wait_for


class Counting:
    def __init__(self) -> None:
        self.served = threading.Event()

    def serve_idle(self) -> None:
        self.served.set()


def test_a_watched_client_is_served_without_being_used() -> None:
    client = Counting()
    idle_clients.watch(client)
    wait_for(client.served.is_set, 10, "the client served")
    idle_clients.unwatch(client)


def test_the_pump_ends_with_the_last_client_and_the_next_watch_starts_another() -> None:
    client = Counting()
    idle_clients.watch(client)
    wait_for(client.served.is_set, 10, "the client served")
    idle_clients.unwatch(client)
    wait_for(lambda: not _pumps(), 10, "the pump to end")
    again = Counting()
    idle_clients.watch(again)
    wait_for(again.served.is_set, 10, "the next client served")
    idle_clients.unwatch(again)


def _pumps() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "kmq-idle-clients"]


# What Celery's prefork pool does: fork a process that runs threads (this one's pump).
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_serves_none_of_its_parents_clients() -> None:
    parents = Counting()
    idle_clients.watch(parents)
    pid = os.fork()
    if pid == 0:  # the child: a client of its own is served, the parent's is not
        code = 1
        try:
            parents.served.clear()
            own = Counting()
            idle_clients.watch(own)
            code = 0 if own.served.wait(10) and not parents.served.is_set() else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    idle_clients.unwatch(parents)
    assert os.waitstatus_to_exitcode(status) == 0
