"""`kmq doctor`: one line per check, each failure with the fix.

It is what an operator runs first when something does not work, so every
check catches its own failure and the others still run.
"""

import asyncio
from argparse import ArgumentParser
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import requests
from channels.layers import get_channel_layer
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor

from kmqadmin.celery import app as celery_app
from kmqadmin.console.oidc.provider import TIMEOUT_S, configured
from kmqadmin.kafka.admin import share_group_configs as share_group
from kmqadmin.kafka.admin.share_groups import ShareGroupError, broker_limits
from kmqadmin.kafka.admin.topics import admin_client, cluster_metadata, partition_counts
from kmqadmin.kafka.client.errors import KafkaSetupError
from kmqadmin.kmq import QueueConfig

if TYPE_CHECKING:
    from kmqadmin.console.models import Cluster, Queue


# A broker that does not answer metadata in this long is reported as not answering.
KAFKA_WITHIN_S = 2.0


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
    """What doctor needs of a queue: where it lives and its config.
    ``cluster`` is None for a --topic on KAFKA_BOOTSTRAP_SERVERS."""

    config: QueueConfig
    cluster: "Cluster | None" = None

    @property
    def bootstrap(self) -> str:
        return self.config.bootstrap_servers

    def topics(self) -> tuple[str, ...]:
        """kmq: queue, markers, DLQ; share: queue, DLQ, counts."""
        c = self.config
        if c.backend == "share":
            return c.topic, c.dlq_topic, c.counts_topic
        return c.topic, c.markers_topic, c.dlq_topic


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
        CheckedQueue(QueueConfig(settings.KAFKA_BOOTSTRAP_SERVERS, t, group_id=""))
        for t in extra_topics
    ]
    if database.ok:
        queues += registered_queues()
    checks = [database, check_channel_layer(), check_celery()]
    if configured() is not None:
        checks.append(check_sso())
    places = {(settings.KAFKA_BOOTSTRAP_SERVERS, None)} | {(q.bootstrap, q.cluster) for q in queues}
    for bootstrap, cluster in sorted(places, key=lambda place: (place[0], str(place[1] or ""))):
        found = [q for q in queues if (q.bootstrap, q.cluster) == (bootstrap, cluster)]
        checks += check_kafka(bootstrap, found, cluster)
    return checks


def registered_queues() -> list[CheckedQueue]:
    from kmqadmin.console.models import Queue

    return [CheckedQueue(_config(q), q.cluster) for q in Queue.objects.select_related("cluster")]


def _config(queue: "Queue") -> QueueConfig:
    """The queue's config; its topics alone when its cluster's settings
    cannot be read (an unset secret): check_kafka reports that, by name."""
    try:
        return queue.config()
    except KafkaSetupError:
        return QueueConfig(
            queue.cluster.bootstrap,
            queue.topic,
            queue.group_id,
            markers_topic=queue.markers_topic,
            dlq_topic=queue.dlq_topic,
            backend=queue.backend,
        )


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


@_guarded("sso", "check KMQ_OIDC_ISSUER: the URL your identity provider names as its issuer")
def check_sso() -> Check:
    """Discovery, and the keys tokens are checked on: what a sign-in and a
    bearer token need of the provider before anyone tries one."""
    provider = configured()
    assert provider is not None
    jwks_uri = provider.metadata()["jwks_uri"]
    answer = requests.get(jwks_uri, timeout=TIMEOUT_S)
    answer.raise_for_status()
    keys = [key for key in answer.json().get("keys", []) if key.get("use", "sig") == "sig"]
    if not keys:
        raise RuntimeError(f"{jwks_uri} publishes no signing key")
    return Check("sso", True, f"{provider.issuer}: discovery read, {len(keys)} signing keys")


def check_kafka(
    bootstrap: str, queues: list[CheckedQueue], cluster: "Cluster | None" = None
) -> list[Check]:
    """Metadata with the cluster's own security settings (a wrong password or
    an unset secret variable is this check's FAIL line, naming the setting)."""
    try:
        extra = cluster.kafka_config() if cluster is not None else {}
        metadata = cluster_metadata(bootstrap, KAFKA_WITHIN_S, admin_client(bootstrap, extra))
    except KafkaSetupError as exc:
        return [Check("kafka", False, str(exc))]
    counts = partition_counts(metadata, [name for queue in queues for name in queue.topics()])
    checks = [Check("kafka", True, f"{bootstrap} answers ({len(metadata.brokers)} brokers)")]
    for queue in queues:
        checks += check_queue_topics(queue, counts)
        if queue.config.backend == "share":
            checks.append(check_share_group(queue.config))
    return checks


def check_share_group(config: QueueConfig) -> Check:
    """The queue's limits against the broker's share-group bounds."""
    try:
        admin = admin_client(config.bootstrap_servers, config.kafka_config)
        limits = broker_limits(admin, share_group.TIMEOUT_S)
        share_group.check(config, limits)
    except ShareGroupError as exc:
        return Check("share group", False, str(exc))
    return Check(
        "share group",
        True,
        f"{config.group_id}: delivery limit {limits.delivery_count_limit}, locks "
        f"{limits.min_lock_ms}..{limits.max_lock_ms} ms hold {config.topic}'s settings",
    )


def check_queue_topics(queue: CheckedQueue, counts: dict[str, int | None]) -> list[Check]:
    partitions = counts.get(queue.config.topic)
    wanted = partitions or 1
    checks = []
    for name in queue.topics():
        if counts.get(name) is None:
            n = 1 if name == queue.config.counts_topic else wanted
            fix = f"create it with {n} partitions (the console's 'create topics' does)"
            checks.append(Check("topic", False, f"{name} is missing", fix))
        else:
            checks.append(Check("topic", True, f"{name} ({counts[name]} partitions)"))
    if queue.config.backend == "kmq":
        checks += check_markers_partitions(queue.config, partitions, counts)
    return checks


def check_markers_partitions(
    config: QueueConfig, partitions: int | None, counts: dict[str, int | None]
) -> list[Check]:
    topic, markers_topic = config.topic, config.markers_topic
    markers = counts.get(markers_topic)
    if partitions is None or markers is None:
        return []
    if markers == partitions:
        return [Check("partitions", True, f"{topic} and {markers_topic} both have {partitions}")]
    detail = (
        f"{topic} has {partitions} partitions but {markers_topic} has "
        f"{markers}; markers of queue partition p go to markers partition p"
    )
    fix = f"give {markers_topic} exactly {partitions} partitions (recreate it)"
    return [Check("partitions", False, detail, fix)]
