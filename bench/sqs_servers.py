"""The two SQS servers bench/sqs.py drives: ours (the web process on a
fresh database, a user with an SQS key and a REST token, each queue's
tracker in this process) and ElasticMQ (a JVM of its own from
.jars/elasticmq, which `make deps` fetches).

Django is set up here, on import, on a data dir of the run's own: the
benchmark's client processes import bench/sqs.py without it, so they stay
plain boto3 clients."""

import atexit
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = tempfile.mkdtemp(prefix="kmq-bench-sqs-")
atexit.register(shutil.rmtree, DATA_DIR, ignore_errors=True)
os.environ["KMQ_DATA_DIR"] = DATA_DIR
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kmqadmin.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.models import Group  # noqa: E402
from django.core.management import call_command  # noqa: E402
from rest_framework.authtoken.models import Token  # noqa: E402

from kmqadmin.console.cli import processes  # noqa: E402
from kmqadmin.console.models import Cluster, Queue  # noqa: E402
from kmqadmin.console.services import sqs_keys  # noqa: E402
from kmqadmin.kafka.embedded import child  # noqa: E402
from kmqadmin.kafka.embedded.broker import free_port  # noqa: E402
from kmqadmin.kmq import RedeliveryTracker  # noqa: E402

ELASTICMQ_JARS = ROOT / ".jars" / "elasticmq"
ELASTICMQ_MAIN = "org.elasticmq.server.Main"
JAVA = ["java", "-Xmx256m"]
START_TIMEOUT_S = 90


@dataclass(frozen=True)
class Server:
    """Where an SQS client reaches a server, and as whom. ``token``: our
    REST API's, for the enqueue baseline; ``pid``: the process whose CPU
    the run reports."""

    name: str
    endpoint: str
    key_id: str
    secret: str
    pid: int
    token: str = ""
    rest: str = ""


@contextmanager
def ours(bootstrap: str) -> Iterator[Server]:
    """The web process serving kmqadmin on ``bootstrap`` as `make run`
    starts it (at its log level, WARNING: no access log), with an admin's
    SQS key and REST token."""
    call_command("migrate", verbosity=0)
    Cluster.objects.create(name="bench", bootstrap_servers=bootstrap)
    user = get_user_model().objects.create_user("bench")
    user.groups.add(Group.objects.get(name="admin"))
    key_id, secret = sqs_keys.create(user)
    port = free_port()
    env = {**os.environ, "KAFKA_BOOTSTRAP_SERVERS": bootstrap}
    with open(Path(DATA_DIR) / "web.log", "ab") as log:
        process = subprocess.Popen(
            processes.web("127.0.0.1", port, "WARNING"),
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_answers(f"{base}/sqs", process, "web.log")
        yield Server(
            "ours",
            f"{base}/sqs",
            key_id,
            secret,
            process.pid,
            Token.objects.create(user=user).key,
            f"{base}/api",
        )
    finally:
        child.stop(process, grace=30)


@contextmanager
def trackers(bootstrap: str, names: list[str]) -> Iterator[None]:
    """Each named queue's redelivery tracker, as a worker runs it: without
    one, nothing received and not deleted ever comes back."""
    with ExitStack() as stack:
        for name in names:
            tracker = RedeliveryTracker(Queue.objects.get(topic=name).config())
            tracker.start()
            stack.callback(tracker.stop)
        yield


def elasticmq_version() -> str:
    """The version in the server jar's name: Maven's copy keeps it."""
    jars = sorted(ELASTICMQ_JARS.glob("elasticmq-server_*.jar"))
    if not jars:
        raise RuntimeError(f"no ElasticMQ in {ELASTICMQ_JARS}: `make deps` fetches it")
    return jars[-1].stem.rsplit("-", 1)[1]


@contextmanager
def elasticmq() -> Iterator[Server]:
    """ElasticMQ on a free loopback port, in memory, stopped at the end."""
    version = elasticmq_version()
    port = free_port()
    conf = Path(DATA_DIR) / "elasticmq.conf"
    conf.write_text(
        'include classpath("application.conf")\n'
        'rest-sqs.bind-hostname = "127.0.0.1"\n'
        f"rest-sqs.bind-port = {port}\n"
        f'node-address {{ host = "127.0.0.1", port = {port} }}\n'
    )
    with open(Path(DATA_DIR) / "elasticmq.log", "ab") as log:
        process = subprocess.Popen(
            [*JAVA, f"-Dconfig.file={conf}", "-cp", f"{ELASTICMQ_JARS}/*", ELASTICMQ_MAIN],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        _wait_until_answers(f"{endpoint}/?Action=ListQueues", process, "elasticmq.log")
        yield Server(f"ElasticMQ {version}", endpoint, "x", "x", process.pid)
    finally:
        child.stop(process, grace=10)


def _wait_until_answers(url: str, process: subprocess.Popen, log: str) -> None:
    """Until ``url`` answers at all (any HTTP status): a server listening
    but not yet serving would time the first requests of the run. A server
    that exits or never answers fails the run with the end of its ``log``
    (the run's data dir goes with it)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    lines = (Path(DATA_DIR) / log).read_text(errors="replace").splitlines()[-30:]
    told = "\n".join(lines)
    raise RuntimeError(f"{url} did not answer (exit code {process.poll()}); {log}:\n{told}")
