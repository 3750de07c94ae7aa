"""A second embedded Apache Kafka with a SASL_SSL listener (SCRAM-SHA-512,
client certificates required), for these tests only: the rest of the suite
never waits for it."""

import gc
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from kmqadmin.console.models import Cluster, Queue
from kmqadmin.console.services.clusters import clients
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kafka.embedded.sasl_ssl import SaslSslListener
from tests.broker import SUITE_SETTINGS
from tests.security.certs import Certificates, make_certificates

USER, PASSWORD = "kmq-app", "s3cret-Zq9-pw"
PASSWORD_ENV = "KMQ_TEST_SASL_PASSWORD"


@dataclass(frozen=True)
class SecureKafka:
    bootstrap_servers: str
    certificates: Certificates


@pytest.fixture(scope="session")
def secure_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureKafka]:
    certificates = make_certificates(tmp_path_factory.mktemp("certs"))
    listener = SaslSslListener(
        keystore=certificates.broker_keystore,
        truststore=certificates.ca,
        users={USER: PASSWORD},
    )
    with EmbeddedBroker(sasl_ssl=listener, overrides=SUITE_SETTINGS) as broker:
        yield SecureKafka(broker.sasl_ssl_bootstrap_servers, certificates)
        # Kept and dropped clients of this cluster go before it does (see the
        # ``kafka`` fixture), or they log reconnect attempts to the end of the run.
        clients.close()
        gc.collect()


@pytest.fixture
def password_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(PASSWORD_ENV, PASSWORD)
    return PASSWORD_ENV


@pytest.fixture
def secure_cluster(secure_kafka: SecureKafka, password_env: str) -> Cluster:
    certificates = secure_kafka.certificates
    return Cluster.objects.create(
        name="secured",
        bootstrap_servers=secure_kafka.bootstrap_servers,
        security_protocol="SASL_SSL",
        sasl_mechanism="SCRAM-SHA-512",
        sasl_username=USER,
        sasl_password=f"env:{password_env}",
        ssl_ca_file=str(certificates.ca),
        ssl_cert_file=str(certificates.client_cert),
        ssl_key_file=str(certificates.client_key),
    )


@pytest.fixture
def secure_queue(secure_cluster: Cluster) -> Queue:
    topic = f"sec-{uuid.uuid4().hex[:10]}"
    queue = Queue.objects.create(
        cluster=secure_cluster,
        topic=topic,
        group_id=f"{topic}-workers",
        message_timeout_ms=1000,
        max_redeliveries=1,
    )
    queue.config().ensure_topics(partitions=3)
    return queue
