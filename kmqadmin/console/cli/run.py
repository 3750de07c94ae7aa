"""`kmq run` (what `make run` calls): the whole product on embedded defaults.

Starts the embedded broker when KAFKA_BOOTSTRAP_SERVERS is unset, migrates,
registers the demo queues, then runs web, worker, beat and demo traffic as
child processes until Ctrl-C, or until one of them dies.
"""

import contextlib
import os
import secrets
import threading
import time
import urllib.request
from argparse import ArgumentParser
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from kmqadmin.kafka.embedded import EmbeddedBroker
from kmqadmin.kafka.topics import cluster_metadata

from .children import Children
from .processes import commands
from .stopping import stop_event


def add_arguments(parser: ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="web listen address")
    parser.add_argument("--port", type=int, default=8000, help="web listen port")
    parser.add_argument("--no-demo", action="store_true", help="no demo queues or traffic")


def handle(command: BaseCommand, options: dict[str, Any]) -> None:
    stop = stop_event()
    host, port, demo = options["host"], options["port"], not options["no_demo"]
    with contextlib.ExitStack() as stack:
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
        if demo:
            call_command("kmq", "demo")
        username, password = ensure_login()
        # It serves plain http on a developer's machine: cookies marked
        # secure would not come back from every client there (Python's, or a
        # browser reaching it by a name other than localhost). Behind TLS, set
        # DJANGO_SECURE_COOKIES=1 (README, Production).
        os.environ.setdefault("DJANGO_SECURE_COOKIES", "0")
        children = stack.enter_context(Children())
        for name, argv in commands(host, port, demo).items():
            children.spawn(name, argv)
        url = f"http://{host}:{port}/"
        wait_until_serving(url + "healthz", children, stop)
        command.stdout.write(
            command.style.SUCCESS(f"kmqadmin is up: {url}  (log in as {username} / {password})")
        )
        gone = children.wait(stop)
        if gone is not None:
            raise CommandError(f"{gone[0]} exited with code {gone[1]}; stopped everything")


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


def wait_until_serving(
    url: str, children: Children, stop: threading.Event, timeout: float = 90.0
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not stop.is_set():
        if (gone := children.exited()) is not None:
            raise CommandError(f"{gone[0]} exited with code {gone[1]} while starting")
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2) as response:
            if response.status == 200:
                return
        time.sleep(0.3)
    if not stop.is_set():
        raise CommandError(f"the web process did not answer {url} within {timeout:.0f} s")
