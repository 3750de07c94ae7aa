"""A real schema registry for the tests: Apicurio Registry, in memory, on a
free loopback port, speaking the Confluent API at /apis/ccompat/v6.

`make deps` assembles it into .jars/schema-registry (jvm/schema-registry/pom.xml);
KMQ_SCHEMA_REGISTRY_JARS names another folder holding the same build.
"""

import os
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from kmqadmin.kafka.embedded import child
from kmqadmin.kafka.embedded.broker import free_port
from tests.jvm import SHORT_LIVED
from tests.process import ROOT, wait_for

DEFAULT_JARS = ROOT / ".jars" / "schema-registry"
RUNNER = "schema-registry-1-runner.jar"
CCOMPAT = "/apis/ccompat/v6"


class SchemaRegistryServer:
    """Apicurio Registry as a child process; ``url`` is its Confluent API."""

    def __init__(self, host: str = "127.0.0.1", ready_timeout: float = 120.0):
        self.host = host
        self.port = free_port(host)
        self.ready_timeout = ready_timeout
        self.jars = Path(os.environ.get("KMQ_SCHEMA_REGISTRY_JARS") or DEFAULT_JARS)
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}{CCOMPAT}"

    def start(self) -> "SchemaRegistryServer":
        runner = self.jars / RUNNER
        if not runner.is_file():
            raise RuntimeError(f"no schema registry at {runner}: run `make deps`")
        self._process = subprocess.Popen(
            [
                "java",
                "-Xmx256m",
                *SHORT_LIVED,
                f"-Dquarkus.http.host={self.host}",
                f"-Dquarkus.http.port={self.port}",
                "-Dquarkus.log.level=WARN",
                "-jar",
                str(runner),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=child.die_with_parent,
        )
        wait_for(self._answers, self.ready_timeout, f"the schema registry on port {self.port}")
        return self

    def _answers(self) -> bool:
        assert self._process is not None
        if self._process.poll() is not None:
            raise RuntimeError(f"the schema registry exited with {self._process.returncode}")
        try:
            with urllib.request.urlopen(f"{self.url}/subjects", timeout=1) as answer:
                return answer.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def stop(self) -> None:
        if self._process is not None:
            child.stop(self._process, grace=20)

    def __enter__(self) -> "SchemaRegistryServer":
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
