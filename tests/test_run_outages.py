"""`kmq run` through a broker that dies or stalls, with the demo traffic on:
the broker is the only process that restarts, no demo message is lost, and
the traffic resumes soon after the broker is back."""

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import KafkaException

from bench.common import read_topic
from kmqadmin.kafka.admin.consumer_groups import ConsumerGroupAdmin
from kmqadmin.kafka.admin.groups import GroupError
from kmqadmin.kafka.admin.topics import cluster_metadata
from kmqadmin.kafka.embedded.broker import free_port
from tests.process import Run, wait_for

# The budget: everything resumes within this of the broker being back.
RESUMES_WITHIN_S = 30
STALL_S = 30


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Run, str]]:
    """One `kmq run` for both outages (it takes a while to start); each test
    leaves it recovered."""
    tmp_path = tmp_path_factory.mktemp("outages")
    kafka_port = free_port()
    run = Run(
        "--port",
        str(free_port()),
        KMQ_DATA_DIR=str(tmp_path),
        KMQ_EMBEDDED_KAFKA_PORT=str(kafka_port),
        KMQ_WORKER_METRICS_PORT="0",
        KMQ_ANALYTICS_EVERY_S="0",
        # The broker as `make run` starts it (not the suite's tests/jvm.py
        # flags): the budget above is a promise about the product.
        KAFKA_JVM_PERFORMANCE_OPTS="",
    )
    bootstrap = f"127.0.0.1:{kafka_port}"
    try:
        run.up()
        # An outage begins in steady state: the demo past its start-up (which
        # gives up on a broker it cannot reach, naming the variable to fix,
        # and is started again) and its worker acking.
        wait_for(lambda: _acked(bootstrap), 120, "the demo's first acks", 0.5)
        yield run, bootstrap
    finally:
        before_ctrl_c = len(run.lines)
        run.ctrl_c()
        code = run.proc.wait(timeout=60)
    output = "".join(run.lines)
    # Only `kmq run` gets the terminal's Ctrl-C; it stops every child in its
    # own time, none killed, and the broker last (test_run.py). A "Connection
    # refused" may still be said while stopping: an idle client says the
    # outage's failures when it is closed (client_log.py). How long stopping
    # may take is the supervisor's (its grace per child, then "did not stop
    # within"), not a wall clock here that a loaded machine stretches.
    stopping = "".join(run.lines[before_ctrl_c:])
    assert code == 0, output
    assert "Traceback" not in output, output
    for noise in ("Hitting Ctrl+C", "did not stop within"):
        assert noise not in stopping, stopping


def test_a_killed_broker_is_restarted_and_nothing_else_stops(run: tuple[Run, str]) -> None:
    proc, bootstrap = run
    broker, seen = _broker_pid(proc.proc.pid), len(proc.lines)
    before = _end_markers(bootstrap)
    os.kill(broker, signal.SIGKILL)
    wait_for(lambda: _broker_pid(proc.proc.pid) not in (None, broker), 60, "a new broker")
    back = _answering(bootstrap)
    resumed = _resumed(proc, bootstrap, before, back)
    sent = _no_demo_message_lost(bootstrap)
    _print_timeline("kill -9", resumed, proc.lines[seen:], sent)
    assert resumed < RESUMES_WITHIN_S, "".join(proc.lines[seen:])[-20_000:]
    _only_the_broker_restarted(proc.lines[seen:], "kafka exited with code -9")


def test_a_stalled_broker_stops_nothing(run: tuple[Run, str]) -> None:
    proc, bootstrap = run
    broker, seen = _broker_pid(proc.proc.pid), len(proc.lines)
    before = _end_markers(bootstrap)
    os.kill(broker, signal.SIGSTOP)
    time.sleep(STALL_S)  # the stall itself, not a wait for a condition
    os.kill(broker, signal.SIGCONT)
    back = _answering(bootstrap)
    resumed = _resumed(proc, bootstrap, before, back)
    sent = _no_demo_message_lost(bootstrap)
    _print_timeline(f"SIGSTOP {STALL_S} s", resumed, proc.lines[seen:], sent)
    assert resumed < RESUMES_WITHIN_S, "".join(proc.lines[seen:])[-20_000:]
    assert _broker_pid(proc.proc.pid) == broker
    _only_the_broker_restarted(proc.lines[seen:], None)


def _broker_pid(parent: int) -> int | None:
    """The embedded broker among ``parent``'s children."""
    return next(iter(_children(parent, b"kafka.Kafka")), None)


def _children(parent: int, marked: bytes) -> list[int]:
    """``parent``'s children whose command line holds ``marked``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and marked in cmdline:
            found.append(int(entry.name))
    return found


def _answering(bootstrap: str) -> float:
    """When the broker answers metadata again (monotonic seconds)."""

    def answers() -> bool:
        try:
            cluster_metadata(bootstrap, timeout=1)
        except Exception:
            return False
        return True

    wait_for(answers, 90, "the broker to answer again", every=0.2)
    return time.monotonic()


def _end_markers(bootstrap: str) -> int:
    return sum(r.value()[:1] == b"\x01" for r in read_topic(bootstrap, "orders__markers", 3))


def _acked(bootstrap: str, more_than: int = 0) -> bool:
    """Whether the demo's worker has written more end markers than that."""
    try:
        return _end_markers(bootstrap) > more_than
    except KafkaException:  # no topic or no leader yet (a broker rejoins its controller first)
        return False


def _resumed(proc: Run, bootstrap: str, before: int, back: float) -> float:
    """Seconds from ``back`` until the demo's worker acked again (new end
    markers past the ones written before the outage)."""

    wait_for(
        lambda: _acked(bootstrap, more_than=before + 5),
        90,
        "the demo's acks to resume",
        0.5,
        evidence=lambda: _groups(bootstrap) + _demo_threads(proc) + "".join(proc.lines[-100:]),
    )
    return time.monotonic() - back


def _demo_threads(proc: Run) -> str:
    """The demo's thread dump (`kmq` prints one on SIGUSR1): where a worker
    that stopped acking waits."""
    demo = next(iter(_children(proc.proc.pid, b"--traffic")), None)
    if demo is None:
        return "no demo process\n"
    seen = len(proc.lines)
    os.kill(demo, signal.SIGUSR1)
    # The main thread, the oldest, comes last: its bottom frame ends the dump.
    wait_for(lambda: any("manage.py" in line for line in proc.lines[seen:]), 5, "a thread dump")
    return "".join(proc.lines[seen:])


def _groups(bootstrap: str) -> str:
    """What the broker says of the demo's worker groups: their state and
    members, to tell a stuck join from a worker that stopped acking."""
    admin = ConsumerGroupAdmin(bootstrap)
    told = []
    for group_id in ("orders-workers", "emails-workers"):
        try:
            group = admin.group(group_id)
        except GroupError as exc:
            told.append(f"{group_id}: {exc}")
            continue
        members = ", ".join(f"{m.client_id} {m.assignment}" for m in group.members)
        told.append(f"{group_id}: {group.state} [{members}]")
    return "\n".join(told) + "\n"


def _only_the_broker_restarted(lines: list[str], broker_exit: str | None) -> None:
    """The supervisor's exit lines since the outage began: the broker's, if it died."""
    exits = [line for line in lines if " exited with code " in line]
    assert len(exits) == (1 if broker_exit else 0), "".join(lines)
    assert broker_exit is None or broker_exit in exits[0], exits


def _no_demo_message_lost(bootstrap: str) -> int:
    """The demo numbers its messages; every number up to the last written is
    there. Returns how many that is."""
    ids = {json.loads(r.value())["id"] for r in read_topic(bootstrap, "orders", 3)}
    assert ids == set(range(1, max(ids) + 1)), sorted(set(range(1, max(ids) + 1)) - ids)[:20]
    return len(ids)


# What `kmq run` and its children say of an outage: the supervisor's exits
# and restarts, and a service riding one out.
_TIMELINE = (" exited with code ", " restarted", " stopped on a Kafka error", "answers again")


def _print_timeline(outage: str, resumed_s: float, lines: list[str], sent: int) -> None:
    said = [line.strip()[:160] for line in lines if any(n in line for n in _TIMELINE)]
    print(
        json.dumps(
            {
                "outage": outage,
                "resumed_after_broker_back_s": round(resumed_s, 1),
                "orders_sent_all_present": sent,
                "timeline": said,
            },
            indent=1,
        )
    )
