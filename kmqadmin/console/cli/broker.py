"""`kmq broker`: the embedded broker, or a 3-node cluster, in the foreground."""

from argparse import ArgumentParser
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from kmqadmin.console.cli.stopping import stop_event
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kafka.embedded.cluster import EmbeddedCluster


def add_arguments(parser: ArgumentParser) -> None:
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        help="listen port, the first node's with --brokers (default: KMQ_EMBEDDED_KAFKA_PORT, "
        "19092)",
    )
    parser.add_argument(
        "--brokers",
        type=int,
        choices=(1, 3),
        default=1,
        help="3: a KRaft cluster of three nodes on consecutive ports, with the replication "
        "settings a production cluster needs (docs/production.md, 'Production clusters')",
    )


def handle(command: BaseCommand, options: dict[str, Any]) -> None:
    if not settings.KAFKA_EMBEDDED:
        raise CommandError(
            "KAFKA_BOOTSTRAP_SERVERS is set, so nothing would use an embedded broker; "
            "unset KAFKA_BOOTSTRAP_SERVERS to run one"
        )
    port = options["port"] or settings.KMQ_EMBEDDED_KAFKA_PORT
    if options["brokers"] == 1:
        _single(command, port)
    else:
        _cluster(command, port, options["brokers"])


def _single(command: BaseCommand, port: int) -> None:
    stop = stop_event()
    with EmbeddedBroker(port=port, data_dir=settings.DATA_DIR / "kafka") as broker:
        command.stdout.write(f"embedded Kafka broker on {broker.bootstrap_servers}; Ctrl-C stops")
        while broker.running and not stop.wait(0.5):
            pass
    if not stop.is_set():
        raise CommandError(f"the embedded broker exited; see {broker.log_path}")


def _cluster(command: BaseCommand, port: int, size: int) -> None:
    stop = stop_event()
    data_dir = settings.DATA_DIR / f"kafka-{size}-nodes"
    with EmbeddedCluster(size, data_dir=data_dir, first_port=port) as cluster:
        command.stdout.write(
            f"embedded Kafka cluster of {size} nodes on {cluster.bootstrap_servers}; "
            f"KAFKA_BOOTSTRAP_SERVERS={cluster.bootstrap_servers} points kmqadmin at it; "
            "Ctrl-C stops"
        )
        while not (exited := cluster.exited()) and not stop.wait(0.5):
            pass
    if not stop.is_set():
        raise CommandError(
            f"node {exited[0]} of the embedded cluster exited; see "
            f"{cluster.nodes[exited[0]].log_path}"
        )
