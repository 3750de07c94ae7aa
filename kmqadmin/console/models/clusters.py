"""A Kafka cluster the console reaches, with its security and schema registry
settings, and how a link names the cluster of a registration on it."""

from urllib.parse import urlencode

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from kmqadmin.kafka.client.security.access import verify_access
from kmqadmin.kafka.client.security.cluster import (
    MECHANISMS,
    PROTOCOLS,
    REFERENCE_HELP,
    ClusterSecurity,
    read_secret,
    reference_problem,
)
from kmqadmin.kafka.client.security.masking import Masked
from kmqadmin.kafka.inspect.registry_settings import RegistrySettings


def _choices(values: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(value, value) for value in values]


def _reference(help_text: str) -> models.CharField:
    """Where a secret is (env:NAME or file:PATH): the secret itself is never
    stored, so no dump, backup, audit entry or form can show it."""
    return models.CharField(max_length=500, blank=True, help_text=f"{help_text}: {REFERENCE_HELP}.")


def _pem_file(help_text: str) -> models.CharField:
    return models.CharField(max_length=500, blank=True, help_text=f"{help_text} (PEM file path).")


class Cluster(models.Model):
    """A Kafka cluster; blank bootstrap servers mean KAFKA_BOOTSTRAP_SERVERS."""

    name = models.SlugField(unique=True)
    bootstrap_servers = models.CharField(
        max_length=500, blank=True, help_text="Blank: use KAFKA_BOOTSTRAP_SERVERS."
    )
    security_protocol = models.CharField(
        max_length=16, choices=_choices(PROTOCOLS), default="PLAINTEXT"
    )
    sasl_mechanism = models.CharField(max_length=16, choices=_choices(MECHANISMS), blank=True)
    sasl_username = models.CharField(max_length=255, blank=True)
    sasl_password = _reference("SASL password")
    oauth_token_endpoint = models.URLField(
        max_length=500, blank=True, help_text="OAUTHBEARER: the OIDC token endpoint."
    )
    oauth_client_id = models.CharField(max_length=255, blank=True)
    oauth_client_secret = _reference("OAUTHBEARER client secret")
    oauth_scope = models.CharField(max_length=255, blank=True)
    ssl_ca_file = _pem_file("CA certificates the brokers' certificates are checked against")
    ssl_cert_file = _pem_file("Client certificate, for brokers that require one")
    ssl_key_file = _pem_file("The client certificate's private key")
    ssl_key_password = _reference("Password of an encrypted private key")
    schema_registry_url = models.URLField(
        max_length=500,
        blank=True,
        help_text="A schema registry's Confluent-compatible API, to show Avro, Protobuf and "
        "JSON Schema payloads decoded (e.g. http://registry:8081).",
    )
    schema_registry_username = models.CharField(
        max_length=255, blank=True, help_text="Basic auth user, if the registry wants one."
    )
    schema_registry_password = _reference("The schema registry user's password")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def bootstrap(self) -> str:
        return self.bootstrap_servers or settings.KAFKA_BOOTSTRAP_SERVERS

    def security(self) -> ClusterSecurity:
        fields = {name: getattr(self, name) for name in SECURITY_FIELDS}
        return ClusterSecurity(cluster=self.name, **fields)

    def clean(self) -> None:
        if problems := self.security().problems() | self._registry_problems():
            raise ValidationError(problems)

    def _registry_problems(self) -> dict[str, str]:
        found = {}
        if bool(self.schema_registry_username) != bool(self.schema_registry_password):
            found["schema_registry_password"] = "a registry user and its password go together"
        if self.schema_registry_password and (
            problem := reference_problem(self.schema_registry_password)
        ):
            found["schema_registry_password"] = problem
        return found

    def schema_registry(self) -> RegistrySettings | None:
        """Where this cluster's producers register their schemas, the password
        read now (ClusterSettingError if it cannot be); None without a registry."""
        if not self.schema_registry_url:
            return None
        password = self.schema_registry_password and read_secret(
            self.name, "schema_registry_password", self.schema_registry_password
        )
        return RegistrySettings(self.schema_registry_url, self.schema_registry_username, password)

    def kafka_config(self) -> Masked:
        """Client settings for this cluster, secrets read now; the first time
        a secured cluster is used, a bounded login check, so a wrong
        password is one error naming the setting, not librdkafka's retries."""
        found = self.security()
        config = found.librdkafka()
        if found.security_protocol != "PLAINTEXT":
            verify_access(self.bootstrap, found, config, timeout=ACCESS_CHECK_S)
        return config


# The login check's bound: a refused login or handshake comes back well
# within it, and a cluster that does not answer is a 503 within a page's 3 s.
ACCESS_CHECK_S = 2.0

SECURITY_FIELDS = [
    "security_protocol",
    "sasl_mechanism",
    "sasl_username",
    "sasl_password",
    "oauth_token_endpoint",
    "oauth_client_id",
    "oauth_client_secret",
    "oauth_scope",
    "ssl_ca_file",
    "ssl_cert_file",
    "ssl_key_file",
    "ssl_key_password",
]

SCHEMA_REGISTRY_FIELDS = [
    "schema_registry_url",
    "schema_registry_username",
    "schema_registry_password",
]

CLUSTER = "cluster"  # the query parameter that names a registration's cluster


def cluster_query(registration: models.Model) -> str:
    """``cluster=<name>`` of a queue or schedules topic, for the links that
    lead to it: they stay right when another cluster registers the same topic."""
    return urlencode({CLUSTER: registration.cluster.name})
