"""A real OpenID Connect identity provider for the tests: Keycloak, on its
in-memory database, on free loopback ports, with the realms of
tests/oidc/realms imported as it starts (users, groups and clients the OIDC
tests log in with; sslRequired "none", as it serves plain HTTP).

`make deps` unpacks it into .jars/keycloak and builds it there once
(jvm/keycloak/pom.xml, Makefile); KMQ_KEYCLOAK_HOME names another folder
holding the same build.

Test sessions running at once share that folder, so a run writes nothing in
it: Keycloak starts from the Makefile's build as it is (``start
--optimized``; a start that found its options changed would rebuild
lib/quarkus/ in place), and its home (``kc.home.dir``) is a folder of the
run's own whose entries link to the shared ones but for data/, where
Keycloak keeps its transaction log, caches and temporary files and reads the
realms to import (data/import, linked to tests/oidc/realms).
"""

import json
import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from types import TracebackType

from kmqadmin.kafka.embedded import child
from kmqadmin.kafka.embedded.broker import free_port
from tests.jvm import SHORT_LIVED
from tests.process import ROOT, wait_for

DEFAULT_HOME = ROOT / ".jars" / "keycloak"
REALMS = Path(__file__).parent / "oidc" / "realms"
# What kc.sh (26.7) gives the JVM besides its heap and collector: JBoss
# Threads and Infinispan need the opens and native access. The JVM is started
# here, not through kc.sh, because kc.sh runs it as a child of its own: a
# SIGKILL (child.stop's last resort) or die_with_parent would end the shell
# and leave the JVM running.
KC_SH_JVM_OPTIONS = [
    "-XX:MaxMetaspaceSize=256m",
    "-XX:+ExitOnOutOfMemoryError",
    "-Dfile.encoding=UTF-8",
    "-Duser.language=en",
    "-Duser.country=US",
    "-Djava.util.logging.manager=org.jboss.logmanager.LogManager",
    "-Dpicocli.disable.closures=true",
    "-Djava.util.concurrent.ForkJoinPool.common.threadFactory="
    "io.quarkus.bootstrap.forkjoin.QuarkusForkJoinWorkerThreadFactory",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.security=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
]
# Keycloak and Quarkus read their options from these variables too: a
# developer's own Keycloak settings must not reach the tests' server.
_FOREIGN_SETTINGS = ("KC_", "QUARKUS_")


class KeycloakServer:
    """Keycloak as a child process; ``url`` is its root, ``issuer(realm)``
    a realm's issuer as its tokens name it."""

    admin_username = "admin"
    admin_password = "admin"

    def __init__(self, host: str = "127.0.0.1", ready_timeout: float = 240.0):
        self.host = host
        self.port = free_port(host)
        # Its management interface (health, metrics) defaults to port 9000,
        # which two servers, or anything else on the machine, would share.
        self.management_port = free_port(host)
        self.ready_timeout = ready_timeout
        self.home = Path(os.environ.get("KMQ_KEYCLOAK_HOME") or DEFAULT_HOME)
        self.run_dir: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def log(self) -> Path:
        assert self.run_dir is not None, "not started"
        return self.run_dir / "keycloak.log"

    def issuer(self, realm: str = "kmq") -> str:
        return f"{self.url}/realms/{realm}"

    def token(
        self,
        username: str,
        password: str,
        *,
        realm: str = "kmq",
        client_id: str = "kmqadmin",
        secret: str = "kmqadmin-secret",
        kind: str = "access_token",
    ) -> str:
        """A token for ``username`` by the password grant (direct access),
        which the realms' clients allow so tests need no browser; ``kind``
        "id_token" for the ID token that comes with it."""
        form = {
            "grant_type": "password",
            "scope": "openid",
            "client_id": client_id,
            "username": username,
            "password": password,
        }
        if secret:  # none for a public client (master's admin-cli)
            form["client_secret"] = secret
        request = urllib.request.Request(
            f"{self.issuer(realm)}/protocol/openid-connect/token",
            data=urllib.parse.urlencode(form).encode(),
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return json.load(answer)[kind]
        except urllib.error.HTTPError as refused:
            raise RuntimeError(
                f"Keycloak refused {username}'s token: {refused.code} {refused.read().decode()}"
            ) from refused

    def add_to_group(self, username: str, group: str, realm: str = "kmq") -> None:
        """A membership change as a directory admin makes it (admin REST API)."""
        self._admin(
            "PUT", realm, f"users/{self._id(realm, username)}/groups/{self._group(realm, group)}"
        )

    def remove_from_group(self, username: str, group: str, realm: str = "kmq") -> None:
        user, group_id = self._id(realm, username), self._group(realm, group)
        self._admin("DELETE", realm, f"users/{user}/groups/{group_id}")

    def _id(self, realm: str, username: str) -> str:
        [user] = self._admin("GET", realm, f"users?exact=true&username={username}")
        return user["id"]

    def _group(self, realm: str, name: str) -> str:
        [group] = [g for g in self._admin("GET", realm, "groups") if g["name"] == name]
        return group["id"]

    def _admin(self, method: str, realm: str, path: str) -> list | dict | None:
        token = self.token(
            self.admin_username,
            self.admin_password,
            realm="master",
            client_id="admin-cli",
            secret="",
        )
        request = urllib.request.Request(
            f"{self.url}/admin/realms/{realm}/{path}",
            method=method,
            headers={"Authorization": f"Bearer {token}"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            body = answer.read()
        return json.loads(body) if body else None

    def start(self) -> "KeycloakServer":
        runner = self.home / "lib" / "quarkus-run.jar"
        if not runner.is_file():
            raise RuntimeError(f"no Keycloak at {self.home}: run `make deps`")
        self.run_dir = Path(tempfile.mkdtemp(prefix="kmq-keycloak-"))
        home = self._private_home()
        with open(self.log, "ab") as log:
            self._process = subprocess.Popen(
                [
                    "java",
                    "-Xmx512m",
                    *SHORT_LIVED,
                    *KC_SH_JVM_OPTIONS,
                    f"-Dkc.home.dir={home}",
                    f"-Djboss.server.config.dir={home / 'conf'}",
                    f"-Djava.io.tmpdir={home / 'data' / 'tmp'}",
                    "-cp",
                    str(runner),
                    "io.quarkus.bootstrap.runner.QuarkusEntryPoint",
                    "start",
                    "--optimized",
                    "--import-realm",
                    "--cache=local",
                    "--http-enabled=true",
                    f"--http-host={self.host}",
                    f"--http-port={self.port}",
                    f"--http-management-port={self.management_port}",
                    # Tokens name this issuer however a test reached the server.
                    f"--hostname={self.url}",
                ],
                cwd=self.run_dir,
                env=self._environment(),
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=child.die_with_parent,
            )
        try:
            wait_for(
                self._answers,
                self.ready_timeout,
                f"Keycloak on port {self.port}",
                every=0.25,
                evidence=self._log_tail,
            )
        except BaseException:
            self.stop()
            raise
        return self

    def _private_home(self) -> Path:
        """The run's Keycloak home: the shared folder's entries linked, data/
        its own, the realms to import in data/import."""
        assert self.run_dir is not None
        home = self.run_dir / "home"
        (home / "data" / "tmp").mkdir(parents=True)
        for entry in self.home.iterdir():
            if entry.name != "data" and not entry.name.startswith("."):
                (home / entry.name).symlink_to(entry)
        (home / "data" / "import").symlink_to(REALMS)
        return home

    def _environment(self) -> dict[str, str]:
        own = {k: v for k, v in os.environ.items() if not k.startswith(_FOREIGN_SETTINGS)}
        return own | {
            "KC_BOOTSTRAP_ADMIN_USERNAME": self.admin_username,
            "KC_BOOTSTRAP_ADMIN_PASSWORD": self.admin_password,
        }

    def _answers(self) -> bool:
        assert self._process is not None
        if self._process.poll() is not None:
            raise RuntimeError(
                f"Keycloak exited with {self._process.returncode}:\n{self._log_tail()}"
            )
        discovery = f"{self.issuer()}/.well-known/openid-configuration"
        try:
            with urllib.request.urlopen(discovery, timeout=1) as answer:
                return answer.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def _log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError as unreadable:
            return f"(no log: {unreadable})"

    def stop(self) -> None:
        if self._process is not None:
            child.stop(self._process, grace=20)
        if self.run_dir is not None:
            shutil.rmtree(self.run_dir, ignore_errors=True)

    def __enter__(self) -> "KeycloakServer":
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
