"""`kmq doctor`: one line per check, each failure with the fix.

It is what an operator runs first when something does not work, so every
check catches its own failure and the others still run.
"""

import asyncio
from argparse import ArgumentParser
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from channels.layers import get_channel_layer
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor

from kmqadmin.celery import app as celery_app
from kmqadmin.kafka.errors import KafkaSetupError
from kmqadmin.kafka.topics import admin_client, cluster_metadata, partition_counts
from kmqadmin.kmq import names

if TYPE_CHECKING:
    from kmqadmin.console.models import Cluster


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""

    def line(self) -> str:
        status = "  ok" if self.ok else "FAIL"
        fix = f" -> {self.fix}" if self.fix else ""
        return f"{status}  {self.name:<12} {self.detail}{fix}"


@dataclass(frozen=True)
class CheckedQueue:
    """What doctor needs of a queue: where it lives and its three topics.
    ``cluster`` is None for a --topic on KAFKA_BOOTSTRAP_SERVERS."""

    bootstrap: str
    topic: str
    markers_topic: str
    dlq_topic: str
    cluster: "Cluster | None" = None

    def topics(self) -> tuple[str, str, str]:
        return self.topic, self.markers_topic, self.dlq_topic


def add_arguments(parser: ArgumentParser) -> None:
    parser.add_argument(
        "--topic",
        action="append",
        default=[],
        help="also check this queue topic (on KAFKA_BOOTSTRAP_SERVERS) with kmq's default "
        "markers and DLQ names; repeatable",
    )


def handle(command: BaseCommand, options: dict[str, Any]) -> None:
    checks = run_checks(options["topic"])
    for check in checks:
        command.stdout.write(check.line())
    failed = sum(not check.ok for check in checks)
    if failed:
        raise CommandError(f"{failed} of {len(checks)} checks failed", returncode=1)


def run_checks(extra_topics: Iterable[str] = ()) -> list[Check]:
    database = check_database()
    queues = [
        CheckedQueue(
            settings.KAFKA_BOOTSTRAP_SERVERS, t, names.markers_topic(t), names.dlq_topic(t)
        )
        for t in extra_topics
    ]
    if database.ok:
        queues += registered_queues()
    checks = [database, check_channel_layer(), check_celery()]
    places = {(settings.KAFKA_BOOTSTRAP_SERVERS, None)} | {(q.bootstrap, q.cluster) for q in queues}
    for bootstrap, cluster in sorted(places, key=lambda place: (place[0], str(place[1] or ""))):
        found = [q for q in queues if (q.bootstrap, q.cluster) == (bootstrap, cluster)]
        checks += check_kafka(bootstrap, found, cluster)
    return checks


def registered_queues() -> list[CheckedQueue]:
    from kmqadmin.console.models import Queue

    return [
        CheckedQueue(q.cluster.bootstrap, q.topic, q.markers_topic, q.dlq_topic, q.cluster)
        for q in Queue.objects.select_related("cluster")
    ]


def _guarded(name: str, fix: str) -> Callable[[Callable[[], Check]], Callable[[], Check]]:
    """Turns any exception of a check into a FAIL line instead of a traceback."""

    def wrap(probe: Callable[[], Check]) -> Callable[[], Check]:
        def run() -> Check:
            try:
                return probe()
            except Exception as exc:
                detail = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
                return Check(name, False, detail, fix)

        return run

    return wrap


@_guarded("database", "check DATABASE_URL (unset means a SQLite file under KMQ_DATA_DIR)")
def check_database() -> Check:
    try:
        connection.ensure_connection()
    except DatabaseError as exc:
        raise RuntimeError(f"{connection.vendor} unreachable: {exc}") from None
    executor = MigrationExecutor(connection)
    pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if pending:
        return Check(
            "database",
            False,
            f"{connection.vendor}: {len(pending)} migrations not applied",
            "run `python manage.py migrate`",
        )
    return Check("database", True, f"{connection.vendor}, migrations applied")


@_guarded("channels", "check REDIS_URL (unset means an in-process channel layer)")
def check_channel_layer() -> Check:
    layer = get_channel_layer()

    async def round_trip() -> None:
        channel = await layer.new_channel()
        await layer.send(channel, {"type": "doctor.ping"})
        await asyncio.wait_for(layer.receive(channel), timeout=3)

    asyncio.run(round_trip())
    return Check("channels", True, f"{type(layer).__name__} round trip")


@_guarded("celery", "check REDIS_URL (unset means the filesystem transport under KMQ_DATA_DIR)")
def check_celery() -> Check:
    with celery_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=3)
        transport = conn.transport_cls
    return Check("celery", True, f"transport {transport} connects")


def check_kafka(
    bootstrap: str, queues: list[CheckedQueue], cluster: "Cluster | None" = None
) -> list[Check]:
    """Metadata with the cluster's own security settings (a wrong password or
    an unset secret variable is this check's FAIL line, naming the setting)."""
    try:
        extra = cluster.kafka_config() if cluster is not None else {}
        metadata = cluster_metadata(bootstrap, admin=admin_client(bootstrap, extra))
    except KafkaSetupError as exc:
        return [Check("kafka", False, str(exc))]
    counts = partition_counts(metadata, [name for queue in queues for name in queue.topics()])
    checks = [Check("kafka", True, f"{bootstrap} answers ({len(metadata.brokers)} brokers)")]
    for queue in queues:
        checks += check_queue_topics(queue, counts)
    return checks


def check_queue_topics(queue: CheckedQueue, counts: dict[str, int | None]) -> list[Check]:
    partitions = counts.get(queue.topic)
    wanted = partitions or 1
    checks = []
    for name in queue.topics():
        if counts.get(name) is None:
            fix = f"create it with {wanted} partitions (the console's 'create topics' does)"
            checks.append(Check("topic", False, f"{name} is missing", fix))
        else:
            checks.append(Check("topic", True, f"{name} ({counts[name]} partitions)"))
    markers = counts.get(queue.markers_topic)
    if partitions is not None and markers is not None:
        if markers == partitions:
            detail = f"{queue.topic} and {queue.markers_topic} both have {partitions}"
            checks.append(Check("partitions", True, detail))
        else:
            detail = (
                f"{queue.topic} has {partitions} partitions but {queue.markers_topic} has "
                f"{markers}; markers of queue partition p go to markers partition p"
            )
            fix = f"give {queue.markers_topic} exactly {partitions} partitions (recreate it)"
            checks.append(Check("partitions", False, detail, fix))
    return checks
