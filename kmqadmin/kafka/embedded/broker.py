"""The embedded broker: Apache Kafka itself, one KRaft node on loopback.

Used when KAFKA_BOOTSTRAP_SERVERS is unset, and by the test suite, so the
product's promises (transactions hidden from read_committed readers, KIP-33
time seeks, KIP-447 fencing, share groups) are proven on the broker users
run. The jars come from Maven Central (jvm/kafka/pom.xml, fetched by
`make`); this module formats a storage directory and runs ``kafka.Kafka``
as a child process with single-node settings.

A broker given a ``data_dir`` keeps it, so `make run` keeps every queue,
marker and schedule across restarts; without one it lives in a temporary
directory that goes when it stops.
"""

import contextlib
import os
import random
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

from kmqadmin.kafka.admin.topics import admin_client
from kmqadmin.kafka.client.errors import EmbeddedBrokerError, KafkaSetupError
from kmqadmin.kafka.embedded import child, server_properties
from kmqadmin.kafka.embedded.quorum import Quorum, new_cluster_id
from kmqadmin.kafka.embedded.sasl_ssl import SaslSslListener

NODE_ID = 1
DEFAULT_JARS = Path(__file__).resolve().parents[3] / ".jars" / "kafka"
HEAP = "512m"
# Kafka's own variable (kafka-run-class.sh) and default for the collector and
# compiler flags: a suite of short-lived brokers on two cores sets C1 and the
# serial collector, for half the CPU (tests/jvm.py).
JVM_PERFORMANCE_OPTS = "KAFKA_JVM_PERFORMANCE_OPTS"
DEFAULT_PERFORMANCE_OPTS = "-XX:+UseG1GC -XX:MaxGCPauseMillis=20"

# The class-data-sharing archive of the broker's classes, beside its jars
# when `make deps` built it (kafka/embedded/class_archive.py): a broker then
# starts in two thirds of the time and CPU, as it maps its classes rather
# than load and verify some six thousand of them. Without it, or when another
# JVM made it (it is then ignored), a broker starts as before.
CLASS_ARCHIVE = "classes.jsa"

# Where free_port looks: above the usual fixed ports (19092 among them),
# below the kernel's range for the local ends of outgoing connections.
PICKED_PORTS_FROM = 20_000
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody holds right now, outside the kernel's ephemeral range.

    Binding port 0 would pick one from that range, and until the broker
    binds it any client's connection may take it as its local end: a node
    then dies on "Address already in use", as one did beside a suite's
    thousands of connections. Below the range only an explicit bind can."""
    below = _ephemeral_ports_from()
    rng = random.Random()
    for _ in range(100) if below > PICKED_PORTS_FROM + 1000 else ():
        port = rng.randrange(PICKED_PORTS_FROM, below)
        with socket.socket() as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue
        return port
    with socket.socket() as sock:  # a machine whose range starts low
        sock.bind((host, 0))
        return sock.getsockname()[1]


def _ephemeral_ports_from() -> int:
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768  # Linux's default


def port_in_use(host: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


class EmbeddedBroker:
    """An Apache Kafka child process listening on ``host:port`` (a free port if 0)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        data_dir: Path | None = None,
        jars: Path | None = None,
        ready_timeout: float = 60.0,
        sasl_ssl: SaslSslListener | None = None,
        overrides: Mapping[str, str] | None = None,
        node_id: int = NODE_ID,
        quorum: Quorum | None = None,
        jvm_options: Sequence[str] = (),
    ):
        """``quorum``: this node is one of a cluster's (None: a cluster of one);
        ``jvm_options``: more options for the broker's JVM (not its format's)."""
        self.host = host
        self.node_id, self.quorum = node_id, quorum
        self.port = port or free_port(host)
        self.ready_timeout = ready_timeout
        self.jars = jars or Path(os.environ.get("KMQ_KAFKA_JARS", DEFAULT_JARS))
        self._temporary = data_dir is None
        self.data_dir = data_dir or Path(tempfile.mkdtemp(prefix="kmq-kafka-"))
        self._process: subprocess.Popen[bytes] | None = None
        self.sasl_ssl = sasl_ssl
        self.sasl_ssl_port = (sasl_ssl.port or free_port(host)) if sasl_ssl else 0
        # Server properties over ours (a test suite's retention check).
        self.overrides = dict(overrides or {})
        self.jvm_options = list(jvm_options)

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def sasl_ssl_bootstrap_servers(self) -> str:
        """The SASL_SSL listener's address (only with ``sasl_ssl``)."""
        if self.sasl_ssl is None:
            raise KafkaSetupError("this embedded broker was started without a SASL_SSL listener")
        return f"{self.host}:{self.sasl_ssl_port}"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "broker.log"

    @property
    def version(self) -> str:
        """The Apache Kafka version, read off the kafka-clients jar's name."""
        found = sorted(self.jars.glob("kafka-clients-*.jar"))
        return found[0].name.removeprefix("kafka-clients-").removesuffix(".jar") if found else "?"

    def rss_bytes(self) -> int:
        """The broker process's resident memory (0 when it is not running)."""
        if not self.running:
            return 0
        assert self._process is not None
        pages = Path(f"/proc/{self._process.pid}/statm").read_text().split()[1]
        return int(pages) * os.sysconf("SC_PAGE_SIZE")

    def start(self) -> "EmbeddedBroker":
        """Launches the broker and waits until it answers."""
        self.launch()
        self._wait_ready()
        return self

    def launch(self) -> subprocess.Popen[bytes]:
        """Starts the broker's process without waiting for it to answer: how
        `kmq run` brings back a broker that died, while everything else runs on
        (its clients reconnect by themselves). A kept data dir keeps every topic."""
        java = _java()
        self._check_jars()
        if port_in_use(self.host, self.port):
            raise KafkaSetupError(
                f"port {self.port} on {self.host} is already in use; stop what listens there, "
                "or set KMQ_EMBEDDED_KAFKA_PORT to a free port"
            )
        config = self._write_config()
        self._format(java, config)
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                [*self._jvm(java), *self.jvm_options, "kafka.Kafka", str(config)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=child.die_with_parent,
                process_group=child.OWN_GROUP,
            )
        return self._process

    def stop(self) -> None:
        """Stop the broker; a temporary data dir goes with it."""
        self._terminate()
        if self._temporary:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def _terminate(self) -> None:
        """SIGTERM for a clean shutdown (the log is flushed), SIGKILL if it hangs."""
        process, self._process = self._process, None
        if process is not None:
            child.stop(process, grace=15)

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The broker's process while it was started and not stopped."""
        return self._process

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

    def _jvm(self, java: str) -> list[str]:
        archive = self.jars / CLASS_ARCHIVE
        return [
            java,
            f"-Xmx{HEAP}",
            "-Xms128m",
            *(os.environ.get(JVM_PERFORMANCE_OPTS) or DEFAULT_PERFORMANCE_OPTS).split(),
            *([f"-XX:SharedArchiveFile={archive}"] if archive.is_file() else []),
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self.data_dir / 'log4j2.properties'}",
            "-cp",
            f"{self.jars}/*",
        ]

    def _check_jars(self) -> None:
        if not any(self.jars.glob("kafka_2.13-*.jar")):
            raise EmbeddedBrokerError(
                f"no Apache Kafka jars in {self.jars}; run `make deps` (it fetches them from "
                "Maven Central), set KMQ_KAFKA_JARS to a folder holding them, "
                "or set KAFKA_BOOTSTRAP_SERVERS to use another broker"
            )

    def _write_config(self) -> Path:
        """The server properties for this start; listener ports change per start."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self.quorum is None:
            controller = free_port(self.host)
            voters = f"{self.node_id}@{self.host}:{controller}"
            defaults = server_properties.SINGLE_NODE
        else:
            controller = self.quorum.controller_ports[self.node_id]
            voters, defaults = self.quorum.voters(self.host), server_properties.REPLICATED
        advertised = f"PLAINTEXT://{self.host}:{self.port}"
        protocols = "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
        extra: dict[str, str] = {}
        if self.sasl_ssl is not None:
            advertised += f",SASL_SSL://{self.host}:{self.sasl_ssl_port}"
            protocols += ",SASL_SSL:SASL_SSL"
            extra = self.sasl_ssl.settings()
        settings = {
            "process.roles": "broker,controller",
            "node.id": self.node_id,
            "controller.quorum.voters": voters,
            "listeners": f"{advertised},CONTROLLER://{self.host}:{controller}",
            "advertised.listeners": advertised,
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": protocols,
            "log.dirs": str(self.data_dir / "logs"),
            **defaults,
            **extra,
            **self.overrides,
        }
        (self.data_dir / "log4j2.properties").write_text(server_properties.LOG4J2)
        path = self.data_dir / "server.properties"
        server_properties.write(path, settings)
        return path

    def _format(self, java: str, config: Path) -> None:
        """Format the storage once; a kept data dir must be this node's."""
        meta = self.data_dir / "logs" / "meta.properties"
        if meta.exists():
            found = server_properties.read(meta)
            if found.get("node.id") != str(self.node_id):
                raise EmbeddedBrokerError(
                    f"{meta.parent} was formatted for another cluster (node.id "
                    f"{found.get('node.id')}, cluster.id {found.get('cluster.id')}); move it "
                    "away, or set KMQ_DATA_DIR to another folder"
                )
            return
        cluster_id = self.quorum.cluster_id if self.quorum else new_cluster_id()
        done = subprocess.run(
            [
                *self._jvm(java),
                "kafka.tools.StorageTool",
                "format",
                f"--cluster-id={cluster_id}",
                "-c",
                str(config),
                *(self.sasl_ssl.scram_arguments() if self.sasl_ssl else []),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            raise EmbeddedBrokerError(
                f"formatting {self.data_dir} failed: {_cause(done.stderr or done.stdout)}"
            )

    def _wait_ready(self) -> None:
        """Ready means it answers a metadata request, not merely that the port is open."""
        admin = admin_client(self.bootstrap_servers)
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if not self.running:
                raise EmbeddedBrokerError(
                    f"the embedded broker exited at start ({self._log_tail()}; log: "
                    f"{self.log_path}); set KAFKA_BOOTSTRAP_SERVERS to use another broker"
                )
            with contextlib.suppress(Exception):
                if admin.list_topics(timeout=1.0).brokers:
                    return
            time.sleep(0.1)
        self._terminate()
        raise EmbeddedBrokerError(
            f"the embedded broker did not answer within {self.ready_timeout:.0f} s "
            f"(log: {self.log_path}); set KAFKA_BOOTSTRAP_SERVERS to use another broker"
        )

    def _log_tail(self) -> str:
        lines = [
            line
            for line in self.log_path.read_text(errors="replace").splitlines()
            if " ERROR " in line or "Exception" in line
        ]
        return lines[-1].strip() if lines else "no error logged"


def _cause(output: str) -> str:
    """The line of a JVM's output that says what went wrong (a stack trace
    ends in "... 8 more"): its root cause, the last "Caused by:", else its
    first exception line, else its last line."""
    lines = [line.strip() for line in output.strip().splitlines()]
    causes = [line for line in lines if line.startswith("Caused by:")]
    found = next((line for line in lines if "Exception" in line or "Error:" in line), None)
    return causes[-1] if causes else found or (lines[-1] if lines else "no output")


def _java() -> str:
    java = shutil.which("java")
    if java is None:
        raise EmbeddedBrokerError(
            "java is not installed; the embedded Apache Kafka needs a Java 17+ runtime "
            "(`make deps` installs openjdk-17-jre-headless), or set KAFKA_BOOTSTRAP_SERVERS "
            "to use another broker"
        )
    return java
