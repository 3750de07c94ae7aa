"""SoftwareMill kmq's own Java client (jvm/kmq) as a process next to ours."""

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kmqadmin.kmq.config import MarkerFormat
from tests.jvm import SHORT_LIVED
from tests.process import ROOT, wait_for

KMQ_JARS = ROOT / ".jars" / "kmq"
SOURCE = ROOT / "jvm" / "kmq" / "src" / "KmqPeer.java"
# Small and quick to start: two of these run beside the broker on two cores.
JVM_OPTIONS = [
    "-Xmx128m",
    *SHORT_LIVED,
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-Dorg.slf4j.simpleLogger.log.com.softwaremill.kmq=info",
]


@pytest.fixture
def marker_format() -> MarkerFormat:
    """kmq's records, byte for byte: what a queue shared with kmq's clients writes."""
    return "kmq"


@pytest.fixture(scope="session")
def kmq_peer_classpath(tmp_path_factory: pytest.TempPathFactory) -> str:
    """KmqPeer.java compiled against kmq's jars, once per session."""
    javac = shutil.which("javac")
    if javac is None:
        pytest.fail(
            "javac not found: tests/peers compile jvm/kmq/src/KmqPeer.java; install a JDK "
            "(`make deps` installs openjdk-17-jdk-headless)",
            pytrace=False,
        )
    if not (KMQ_JARS / ".installed").exists():
        pytest.fail(f"{KMQ_JARS} is missing: run `make deps` to fetch kmq's jars", pytrace=False)
    classes = tmp_path_factory.mktemp("kmq-peer")
    jars = f"{KMQ_JARS}/*"
    done = subprocess.run(
        [javac, "-d", str(classes), "-cp", jars, str(SOURCE)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        pytest.fail(f"javac failed on {SOURCE}:\n{done.stderr}", pytrace=False)
    return os.pathsep.join([str(classes), jars])


class KmqPeer:
    """`java KmqPeer MODE --name value ...`; its JSON lines collected as they come."""

    def __init__(self, classpath: str, log: Path, mode: str, **options: object) -> None:
        args = []
        for name, value in options.items():
            args += [f"--{name.replace('_', '-')}", str(value)]
        self.mode = mode
        self.log = log
        self.events: list[dict] = []
        self.other: list[str] = []
        with log.open("w") as stderr:
            self.proc = subprocess.Popen(
                ["java", *JVM_OPTIONS, "-cp", classpath, "KmqPeer", mode, *args],
                stdout=subprocess.PIPE,
                stderr=stderr,
                stdin=subprocess.DEVNULL,
                text=True,
            )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            if line.startswith("{"):
                self.events.append(json.loads(line))
            else:  # akka logs to stdout
                self.other.append(line.rstrip("\n"))

    def records(self) -> list[dict]:
        return [e for e in list(self.events) if e["event"] == "record"]

    def wait_for[T](self, condition: Callable[[], T], timeout: float, what: str) -> T:
        """wait_for, failing at once if the JVM died, and with kmq's log on failure."""

        def alive_and(condition=condition) -> T:
            if self.proc.poll() is not None:
                raise AssertionError(f"kmq {self.mode} exited ({self.proc.returncode})")
            return condition()

        try:
            return wait_for(alive_and, timeout, what)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n--- kmq {self.mode} log:\n{self.tail()}") from None

    def tail(self, lines: int = 40) -> str:
        logged = self.log.read_text(errors="replace").splitlines() + self.other
        return "\n".join(logged[-lines:])

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


@pytest.fixture
def kmq_peer(kmq_peer_classpath: str, tmp_path: Path) -> Iterator[Callable[..., KmqPeer]]:
    """Starts kmq peers; every one still running is killed when the test ends."""
    started: list[KmqPeer] = []

    def start(mode: str, **options: object) -> KmqPeer:
        peer = KmqPeer(
            kmq_peer_classpath, tmp_path / f"kmq-{mode}-{len(started)}.log", mode, **options
        )
        started.append(peer)
        return peer

    try:
        yield start
    finally:
        for peer in started:
            peer.kill()
