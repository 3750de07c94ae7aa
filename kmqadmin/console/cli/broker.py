"""`kmq broker`: the embedded broker in the foreground, for a hand-made setup."""

from argparse import ArgumentParser
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from kmqadmin.kafka.embedded import EmbeddedBroker

from .stopping import stop_event


def add_arguments(parser: ArgumentParser) -> None:
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        help="listen port (default: KMQ_EMBEDDED_KAFKA_PORT, 19092)",
    )


def handle(command: BaseCommand, options: dict[str, Any]) -> None:
    if not settings.KAFKA_EMBEDDED:
        raise CommandError(
            "KAFKA_BOOTSTRAP_SERVERS is set, so nothing would use an embedded broker; "
            "unset KAFKA_BOOTSTRAP_SERVERS to run one"
        )
    stop = stop_event()
    with EmbeddedBroker(
        port=options["port"] or settings.KMQ_EMBEDDED_KAFKA_PORT,
        data_dir=settings.DATA_DIR / "kafka",
    ) as broker:
        command.stdout.write(f"embedded Kafka broker on {broker.bootstrap_servers}; Ctrl-C stops")
        while broker.running and not stop.wait(0.5):
            pass
    if not stop.is_set():
        raise CommandError(f"the embedded broker exited; see {broker.log_path}")
