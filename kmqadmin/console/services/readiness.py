"""Whether this process can do its work now: what /readyz answers.

Liveness (/healthz) says the process serves requests; readiness says what it
needs answers too: its database, and every Kafka cluster it serves. A load
balancer takes an unready web process out of rotation, and a person reads
which part is away. Every probe is bounded so that the whole answer comes
within READY_WITHIN_S, also when a broker is stopped and accepts connections
it never answers: the clusters are asked at once, each with PROBE_S.
"""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, connection

from kmqadmin.kafka.errors import KafkaSetupError
from kmqadmin.kafka.topics import admin_client, cluster_metadata

from ..models import Cluster

READY_WITHIN_S = 2.0
# The Kafka probes' own bound: what is left of READY_WITHIN_S after the
# database, the threads and the answer.
PROBE_S = 1.5


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
    """Metadata from the cluster, with its security settings but without the
    login check a page makes first (a probe must not wait on a token endpoint)."""
    probe = f"kafka:{name}"
    try:
        extra = cluster.security().librdkafka() if cluster is not None else {}
        metadata = cluster_metadata(bootstrap, PROBE_S, admin_client(bootstrap, extra))
    except KafkaSetupError as exc:
        return Probe(probe, False, str(exc).split(";")[0])
    return Probe(probe, True, f"{bootstrap}: {len(metadata.brokers)} brokers answer")
