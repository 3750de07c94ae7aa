"""`kmq run` (what `make run` calls) brings the whole product up, and down again."""

import http.cookiejar
import re
import signal
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from django.core.management.base import CommandError

from bench.common import read_topic
from kmqadmin.console.cli.processes import commands
from kmqadmin.console.cli.run import settle
from kmqadmin.console.cli.supervisor import (
    EX_CONFIG,
    MisconfiguredChild,
    Supervisor,
)
from kmqadmin.kafka.embedded.broker import free_port, port_in_use
from kmqadmin.kafka.ownership import restart_pause
from tests.process import Run, wait_for


def test_run_serves_the_console_with_demo_queues_then_stops_everything(tmp_path) -> None:
    web_port, kafka_port = free_port(), free_port()
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    run = Run(
        "--port",
        str(web_port),
        KMQ_DATA_DIR=str(tmp_path),
        KMQ_EMBEDDED_KAFKA_PORT=str(kafka_port),
        KMQ_WORKER_METRICS_PORT="0",
        TMPDIR=str(scratch),
    )
    try:
        url, user, password = run.up()
        page = log_in(url, user, password)
        # The web and the worker count into metrics directories of their own.
        web_files = lambda: list(scratch.glob("kmq-metrics-web-*/*.db"))  # noqa: E731
        wait_for(web_files, 30, "the web's multiprocess metrics files")
        assert len(list(scratch.glob("kmq-metrics-worker-*"))) == 1
        assert "<h1>Queues</h1>" in page
        assert 'href="/queues/orders/?cluster=' in page
        assert 'href="/queues/emails/?cluster=' in page
        # demo traffic flows through the queue core: messages get start and end markers
        bootstrap = f"127.0.0.1:{kafka_port}"
        kinds = lambda: {r.value()[:1] for r in read_topic(bootstrap, "orders__markers", 3)}  # noqa: E731
        wait_for(lambda: {b"\x00", b"\x01"} <= kinds(), 60, "start and end markers")
    finally:
        seen = list(run.lines)
        code = run.stop()
    assert code == 0, "".join(run.lines)
    # Quiet children: no banners, access log or INFO; the URL and login come
    # once the web, a worker and the demo traffic are up.
    output = "".join(seen)
    for chatter in (" INFO ", "GET /", "celery@", "No hostname"):
        assert chatter not in output, output
    assert output.count("demo queues") == 1, output  # the run's own, not the traffic's
    assert not port_in_use("127.0.0.1", web_port)
    assert not port_in_use("127.0.0.1", kafka_port)
    assert not list(scratch.glob("kmq-metrics-*")), "metrics directories left behind"


def log_in(url: str, user: str, password: str) -> str:
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    login = opener.open(url + "accounts/login/").read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login).group(1)
    form = {"username": user, "password": password, "csrfmiddlewaretoken": token, "next": "/"}
    response = opener.open(url + "accounts/login/", urllib.parse.urlencode(form).encode())
    return response.read().decode()


def test_children_log_at_warning_unless_asked() -> None:
    quiet, loud = commands("h", 1, demo=True, level="WARNING"), commands("h", 1, True, "INFO")
    assert "--no-access-log" in quiet["web"] and "--no-access-log" not in loud["web"]
    assert quiet["worker"][-3:] == ["worker", "--loglevel", "WARNING"]
    assert "--quiet" in quiet["beat"] and "--quiet" not in loud["beat"]  # Celery's banners
    assert quiet["demo"][3:5] == ["--verbosity", "0"] and "--verbosity" not in loud["demo"]


def test_settling_waits_for_each_check_in_turn_with_a_deadline() -> None:
    stop, asked = threading.Event(), []
    answers = iter([False, False, True])

    def web() -> bool:
        asked.append("web")
        return next(answers)

    def worker() -> bool:
        asked.append("worker")
        return True

    with Supervisor() as supervisor:
        assert settle({"web": web, "worker": worker}, supervisor, stop, timeout=10)
        assert asked == ["web", "web", "web", "worker"]
        with pytest.raises(CommandError, match="never did not answer within 1 s"):
            settle({"never": lambda: False}, supervisor, stop, timeout=1)
        stop.set()
        assert not settle({"never": lambda: False}, supervisor, stop, timeout=10)


def test_a_child_that_exits_is_restarted_after_a_growing_pause_and_the_others_run_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with Supervisor() as supervisor:
        supervisor.spawn("steady", [sys.executable, "-c", "import time; time.sleep(120)"])
        launches: list[float] = []
        supervisor.spawn(
            "flaky",
            [sys.executable, "-c", "raise SystemExit(3)"],
            before_each=lambda: launches.append(time.monotonic()),
        )
        steady = supervisor.process("steady")
        started = time.monotonic()

        def exited_three_times() -> bool:
            supervisor.check()
            return len(supervisor.exits("flaky")) >= 3

        wait_for(exited_three_times, 30, "three lives of the flaky child")
        # Pauses of 1 s then 2 s between its lives: it does not spin.
        assert time.monotonic() - started >= restart_pause.FIRST_S * 3
        assert supervisor.exits("flaky") == [3, 3, 3]
        assert len(launches) in (3, 4)  # before each life (a fourth may have begun)
        assert steady is not None and steady.poll() is None
        assert supervisor.exits("steady") == []
    assert "flaky exited with code 3" in caplog.text
    assert steady.poll() is not None  # stopped with the rest


def test_a_child_whose_settings_are_wrong_stops_everything() -> None:
    with Supervisor() as supervisor:
        supervisor.spawn("web", [sys.executable, "-c", f"raise SystemExit({EX_CONFIG})"])

        def checked() -> bool:
            supervisor.check()
            return False

        with pytest.raises(MisconfiguredChild, match="web exited: a setting is wrong"):
            wait_for(checked, 30, "the misconfigured child's exit")


def test_a_child_that_ignores_sigterm_is_killed_and_said_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    deaf = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"
    supervisor = Supervisor()
    supervisor.spawn("deaf", [sys.executable, "-c", deaf])
    supervisor.spawn("polite", [sys.executable, "-c", "import time; time.sleep(120)"])
    deaf_process, polite = supervisor.process("deaf"), supervisor.process("polite")
    # Python ignores SIGTERM only once its handler is set: wait for it to get there.
    wait_for(lambda: _ignores_sigterm(deaf_process.pid), 30, "the child's handler")
    supervisor.stop(grace=1.0)
    assert deaf_process.returncode == -9 and polite.returncode == -15
    assert "deaf did not stop within 1 s; killed" in caplog.text
    assert "polite did not stop" not in caplog.text


def _ignores_sigterm(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status").read_text()
    ignored = int(status.split("SigIgn:")[1].split()[0], 16)
    return bool(ignored & (1 << (signal.SIGTERM - 1)))


def test_the_broker_is_stopped_only_once_every_other_child_has_exited(tmp_path: Path) -> None:
    """So no client outlives the broker it talks to: the web here takes 1 s
    over its SIGTERM, and the broker's SIGTERM comes after that."""
    noted = (
        "import pathlib, signal, sys, time\n"
        "def down(*_):\n"
        "    time.sleep(float(sys.argv[2]))\n"
        "    pathlib.Path(sys.argv[1]).write_text(repr(time.time()))\n"
        "    raise SystemExit(0)\n"
        "signal.signal(signal.SIGTERM, down)\n"
        "pathlib.Path(sys.argv[1] + '.up').touch()\n"
        "time.sleep(120)\n"
    )
    supervisor = Supervisor()
    for name, delay in (("kafka", "0"), ("web", "1")):
        supervisor.spawn(name, [sys.executable, "-c", noted, str(tmp_path / name), delay])
    for name in ("kafka", "web"):
        wait_for((tmp_path / f"{name}.up").exists, 30, f"{name}'s SIGTERM handler")
    supervisor.stop()
    web_exited = float((tmp_path / "web").read_text())
    broker_stopping = float((tmp_path / "kafka").read_text())
    assert broker_stopping > web_exited
