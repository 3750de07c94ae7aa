"""`kmq run` (what `make run` calls): the whole product on embedded defaults.

Starts the embedded broker when KAFKA_BOOTSTRAP_SERVERS is unset, migrates,
registers that broker as cluster "local" (so the console and SQS clients
need no step of their own) and the demo queues, then supervises web,
worker, beat, demo traffic and the broker until Ctrl-C: a child that exits
is started again (supervisor.py), whatever Kafka does meanwhile. The
children log at WARNING unless LOG_LEVEL asks for more, and the URL and
login are printed last, once the web answers, so they are the line a
person sees.
"""

import contextlib
import logging
import os
import secrets
import tempfile
import threading
import time
import urllib.request
from argparse import ArgumentParser
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from confluent_kafka import Consumer, KafkaException, TopicPartition
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from kmqadmin.console.cli.cluster import LOCAL, local
from kmqadmin.console.cli.demo import DEMO_QUEUES
from kmqadmin.console.cli.processes import commands
from kmqadmin.console.cli.stopping import stop_event
from kmqadmin.console.cli.supervisor import BROKER, MisconfiguredChild, Supervisor
from kmqadmin.console.models import Queue
from kmqadmin.kafka.admin.topics import cluster_metadata, topic_partitions
from kmqadmin.kafka.client.config import consumer_config
from kmqadmin.kafka.client.errors import KafkaSetupError
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.metrics.exposition import MULTIPROC_DIR, forget_dead_processes


def add_arguments(parser: ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="web listen address")
    parser.add_argument("--port", type=int, default=8000, help="web listen port")
    parser.add_argument("--no-demo", action="store_true", help="no demo queues or traffic")


# The services whose metrics add up over their processes.
METERED = ("web", "worker")
# The children's log level when LOG_LEVEL is unset: their start-up chatter
# would bury the banner.
QUIET = "WARNING"
# Pages that answer only once the web process has its database and templates.
SETTLED = ("healthz", "accounts/login/")


def handle(command: BaseCommand, options: dict[str, Any]) -> None:
    stop = stop_event()
    host, port, demo = options["host"], options["port"], not options["no_demo"]
    level = os.environ.setdefault("LOG_LEVEL", QUIET).upper()  # the children inherit it
    logging.getLogger().setLevel(level)
    with contextlib.ExitStack() as stack:
        broker = None
        if settings.KAFKA_EMBEDDED:
            broker = stack.enter_context(
                EmbeddedBroker(
                    port=settings.KMQ_EMBEDDED_KAFKA_PORT, data_dir=settings.DATA_DIR / "kafka"
                )
            )
            command.stdout.write(f"embedded Kafka broker on {broker.bootstrap_servers}")
        else:
            cluster_metadata(settings.KAFKA_BOOTSTRAP_SERVERS)
        call_command("migrate", interactive=False, verbosity=0)
        if broker is not None:
            local()
        if demo:
            call_command("kmq", "demo")
        username, password = ensure_login()
        # It serves plain http on a developer's machine: cookies marked
        # secure would not come back from every client there (Python's, or a
        # browser reaching it by a name other than localhost). Behind TLS, set
        # DJANGO_SECURE_COOKIES=1 (docs/production.md).
        os.environ.setdefault("DJANGO_SECURE_COOKIES", "0")
        # Entered before the children, so removed only once they have stopped.
        environments = {name: _metered(name, stack) for name in METERED}
        supervisor = stack.enter_context(Supervisor())
        if broker is not None:
            supervisor.adopt(BROKER, broker.launch, running=broker.process)
        for name, argv in commands(host, port, demo, level).items():
            env = environments.get(name)
            if env is None:
                supervisor.spawn(name, argv)
            else:
                metrics = partial(forget_dead_processes, env[MULTIPROC_DIR])
                supervisor.spawn(name, argv, env, before_each=metrics)
        url = f"http://{host}:{port}/"
        try:
            # The markers check's consumer goes once the run is up: kept to
            # the end, it would outlive the broker and log its refusals.
            with contextlib.ExitStack() as checking:
                markers = checking.enter_context(_demo_markers()) if demo else None
                settled = settle(readiness(url, markers), supervisor, stop)
            if not settled:
                return
            command.stdout.write(
                command.style.SUCCESS(f"kmqadmin is up: {url}  (log in as {username} / {password})")
            )
            supervisor.supervise(stop)
        except MisconfiguredChild as exc:
            raise CommandError(f"{exc}; stopped everything") from None


def _metered(name: str, stack: contextlib.ExitStack) -> dict[str, str]:
    """The environment of a service with an empty metrics directory of its
    own, removed when the run ends: the prefork worker's jobs run in its
    pool's children, which add up there (docs/metrics.md); shared, each
    service would serve the other's metrics too."""
    folder = stack.enter_context(tempfile.TemporaryDirectory(prefix=f"kmq-metrics-{name}-"))
    return {**os.environ, MULTIPROC_DIR: folder}


def ensure_login() -> tuple[str, str]:
    """An admin login for the local console, its password kept in the data dir."""
    username = "admin"
    path = settings.DATA_DIR / "admin-password"
    user, created = get_user_model().objects.get_or_create(
        username=username, defaults={"is_staff": True, "is_superuser": True}
    )
    if created or not path.exists():
        path.write_text(secrets.token_urlsafe(12))
        path.chmod(0o600)
        user.set_password(path.read_text())
        user.save()
    return username, path.read_text()


def readiness(url: str, demo_markers: Callable[[], bool] | None) -> dict[str, Callable[[], bool]]:
    """What settled means, in the order it comes: the web answers its pages,
    a worker answers a ping (its trackers started with it), and the demo
    traffic is writing markers (its clients past their start-up)."""
    checks = {f"the web process at {url}{page}": partial(_answers, url + page) for page in SETTLED}
    checks["a Celery worker"] = _worker_answers
    if demo_markers is not None:
        checks["the demo traffic"] = demo_markers
    return checks


def settle(
    checks: dict[str, Callable[[], bool]],
    supervisor: Supervisor,
    stop: threading.Event,
    timeout: float = 90.0,
) -> bool:
    """Polls each check in turn until it holds, restarting children that exit
    meanwhile: True once all do, False if asked to stop; CommandError naming
    what never came at the deadline."""
    deadline = time.monotonic() + timeout
    for what, ready in checks.items():
        while not ready():
            # Ctrl-C reaches the children too: their exits are no reason to restart them.
            if stop.wait(0.3):
                return False
            supervisor.check()
            if time.monotonic() > deadline:
                raise CommandError(f"{what} did not answer within {timeout:.0f} s")
    return True


def _answers(url: str) -> bool:
    with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2) as response:
        return response.status == 200
    return False


def _worker_answers() -> bool:
    from kmqadmin.celery import app  # the run process needs Celery only here

    return bool(app.control.ping(timeout=0.5))


@contextlib.contextmanager
def _demo_markers() -> Iterator[Callable[[], bool]]:
    """Whether the first demo queue's markers topic holds records yet."""
    config = Queue.objects.get(cluster__name=LOCAL, topic=next(iter(DEMO_QUEUES))).config()
    group = f"{config.group_id}__run"
    consumer = Consumer(consumer_config(config.bootstrap_servers, group, config.kafka_config))

    def written() -> bool:
        """False, not an error, while the broker is away or restarting: the
        supervisor brings it back, and the run waits for it within its deadline."""
        topic = config.markers_topic
        with contextlib.suppress(KafkaException, KafkaSetupError):
            partitions = topic_partitions(consumer, topic, timeout=1)
            ends = (consumer.get_watermark_offsets(TopicPartition(topic, p), 1) for p in partitions)
            return any(high > 0 for _, high in ends)
        return False

    try:
        yield written
    finally:
        consumer.close()
