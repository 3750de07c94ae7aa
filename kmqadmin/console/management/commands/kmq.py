"""`python manage.py kmq <subcommand>`: the operator's entry point."""

import faulthandler
import signal
from argparse import ArgumentParser
from importlib import import_module
from typing import Any

from django.core.management.base import BaseCommand

SUBCOMMANDS = {
    "doctor": "Check broker, topics, database, channel layer and Celery transport.",
    "broker": "Run the embedded Apache Kafka broker in the foreground.",
    "run": "Run everything: embedded broker, web, worker, beat and demo traffic.",
    "demo": "Register the demo queues and produce demo traffic.",
    "analytics": "Compute message-lifecycle analytics with PySpark (batch or --stream).",
    "sqs-key": "Create or revoke an access key of the SQS endpoint.",
    "cluster": "Add, list or remove the Kafka clusters kmqadmin uses.",
}


def _module(name: str) -> Any:
    return import_module(f"kmqadmin.console.cli.{name.replace('-', '_')}")


class Command(BaseCommand):
    help = "kmqadmin operations: " + ", ".join(SUBCOMMANDS)

    def add_arguments(self, parser: ArgumentParser) -> None:
        sub = parser.add_subparsers(dest="subcommand", required=True, metavar="subcommand")
        for name, summary in SUBCOMMANDS.items():
            _module(name).add_arguments(sub.add_parser(name, help=summary, description=summary))

    def handle(self, *args: Any, **options: Any) -> None:
        # `kill -USR1 <pid>` prints every thread's stack to stderr: what a
        # process that went quiet is waiting on, as jstack tells of a JVM.
        faulthandler.register(signal.SIGUSR1, all_threads=True)
        _module(options["subcommand"]).handle(self, options)
