"""One web process (as `make run` serves it) for the SQS tests, on
the suite's broker, with a user of each role and an SQS key for each."""

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from kmqadmin.console.cli.processes import web as web_process
from kmqadmin.kafka.embedded.broker import EmbeddedBroker, free_port
from kmqadmin.kmq import QueueConfig, RedeliveryTracker
from tests.process import kill9, manage, spawn, wait_for
from tests.sqs.clients import USERS, Web, sqs, status

# One process for all of it: each `manage.py` start costs a CPU-second or two,
# and the suite sets this up often. The keys are made by the command users run.
SETUP = """
import io
import json
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from kmqadmin.console.models import Cluster, Queue
cluster = Cluster.objects.create(name="local")
for topic in {queues!r}:
    Queue.objects.create(cluster=cluster, topic=topic, group_id=topic + "-workers", partitions=1)
users = get_user_model().objects
for name, role in {roles!r}.items():
    user = users.create_user(name)
    if role:
        user.groups.add(Group.objects.get(name=role))
keys = {{}}
for name in {roles!r}:
    out = io.StringIO()
    call_command("kmq", "sqs-key", "create", name, stdout=out)
    keys[name] = dict(line.split("=", 1) for line in out.getvalue().splitlines())
print(json.dumps(keys))
"""


@pytest.fixture(scope="session")
def web(kafka: EmbeddedBroker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Web]:
    """Started once per test process. Not per package: pytest-xdist hands a
    worker this package's modules between other packages' ones, and pytest
    ends a package's fixtures whenever the next test is elsewhere, so each
    module paid the migrations, the keys and the web process's start again."""
    data = tmp_path_factory.mktemp("sqs-web")
    settings = {"KMQ_DATA_DIR": str(data), "KAFKA_BOOTSTRAP_SERVERS": kafka.bootstrap_servers}
    keys = set_up(settings, ["orders-a", "orders-b", "payments"])
    process, port = start_web(settings)
    try:
        yield Web(port, keys, Path(data) / "web.log", settings, process.pid)
    finally:
        kill9(process)


def set_up(settings: dict[str, str], queues: list[str]) -> dict[str, dict[str, str]]:
    """A data dir migrated, with cluster "local", ``queues`` registered on it
    (no topics made), a user of each role and an SQS key of each's, by user."""
    setup = manage("shell", "-c", SETUP.format(roles=USERS, queues=queues), **settings)
    assert setup.returncode == 0, setup.stderr
    return json.loads(setup.stdout.splitlines()[-1])


def start_web(settings: dict[str, str]) -> tuple[subprocess.Popen, int]:
    """A web process serving kmqadmin on ``settings``' data dir, once it answers."""
    port = free_port()
    log = Path(settings["KMQ_DATA_DIR"]) / "web.log"
    process = spawn(web_process("127.0.0.1", port), log, **settings)
    try:
        wait_for(lambda: status(f"http://127.0.0.1:{port}/sqs") == 403, 60, "the endpoint")
    except AssertionError:
        kill9(process)
        raise
    return process, port


@pytest.fixture
def tracked(
    web: Web, kafka: EmbeddedBroker, request: pytest.FixtureRequest
) -> Iterator[tuple[str, str]]:
    """A queue made over SQS with a 2 s visibility timeout (or the seconds
    an indirect parameter gives), and its tracker."""
    name = f"recv-{uuid.uuid4().hex[:8]}"
    boss = sqs(web, "boss")
    visibility = str(getattr(request, "param", 2))
    url = boss.create_queue(QueueName=name, Attributes={"VisibilityTimeout": visibility})[
        "QueueUrl"
    ]
    tracker = RedeliveryTracker(QueueConfig(kafka.bootstrap_servers, name, f"{name}-workers"))
    tracker.start()
    try:
        yield name, url
    finally:
        tracker.stop()
