"""Whether this process can do its work now: what /readyz answers.

Liveness (/healthz) says the process serves requests; readiness says what it
needs answers too: its database, and every Kafka cluster it serves. A load
balancer takes an unready web process out of rotation, and a person reads
which part is away. The whole answer comes within READY_WITHIN_S, also when
a broker is stopped and accepts connections it never answers: the clusters
are asked at once, each bounded as the pages' own check of them is.
"""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, connection

from kmqadmin.console.models import Cluster
from kmqadmin.console.services.clusters import availability
from kmqadmin.kafka.client.errors import KafkaSetupError
from kmqadmin.kafka.client.security.masking import masked

# availability.PROBE_S, and what the database and the answer take.
READY_WITHIN_S = 2.0


@dataclass(frozen=True)
class Probe:
    name: str
    ok: bool
    detail: str


def probes() -> list[Probe]:
    """The database, then each cluster (the default one when none is registered)."""
    clusters = list(Cluster.objects.all()) if (database := _database()).ok else []
    targets = [(c.name, c.bootstrap, c) for c in clusters] or [
        ("default", settings.KAFKA_BOOTSTRAP_SERVERS, None)
    ]
    with ThreadPoolExecutor(max_workers=min(8, len(targets))) as pool:
        kafka = list(pool.map(lambda t: _kafka(*t), targets))
    return [database, *kafka]


def _database() -> Probe:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as exc:
        return Probe("database", False, f"{connection.vendor}: {exc}")
    return Probe("database", True, connection.vendor)


def _kafka(name: str, bootstrap: str, cluster: Cluster | None) -> Probe:
    """The cluster's answer as the pages see it (services/clusters/availability.py),
    with its security settings but without the login check a page makes
    first: a probe must not wait on a token endpoint."""
    probe = f"kafka:{name}"
    try:
        extra = cluster.security().librdkafka() if cluster is not None else {}
        availability.require(bootstrap, masked(extra))
    except KafkaSetupError as exc:
        return Probe(probe, False, str(exc))
    return Probe(probe, True, f"{bootstrap} answers")
