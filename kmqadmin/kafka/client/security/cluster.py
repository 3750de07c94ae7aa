"""A cluster's security settings, turned into Kafka client settings.

Secrets are referenced, never held: ``env:NAME`` or ``file:PATH`` says where
one is, and it is read when a client is configured. So the database, its
backups, the registry's audit entries and the admin never see a secret, and
a secret mounted as a file (Docker, Kubernetes) is read as it is then.

``librdkafka()`` is for every confluent-kafka client; ``java()`` is for
Spark's own Kafka source, which runs the Java client. Both are ``Masked``.
A setting that cannot be used raises ClusterSettingError naming the
cluster, the setting and what is wrong.
"""

import os
from dataclasses import dataclass
from pathlib import Path

from kmqadmin.kafka.client.errors import ClusterSettingError
from kmqadmin.kafka.client.security.masking import Masked

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
# The settings that name where a secret is.
SECRET_REFERENCES = ("sasl_password", "oauth_client_secret", "ssl_key_password")
REFERENCE_HELP = "env:NAME (an environment variable) or file:/path (a file holding it)"

_JAAS_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "OAUTHBEARER": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule",
}
_OIDC_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"


def reference_problem(reference: str) -> str | None:
    """Why ``reference`` is not ``env:NAME`` or ``file:/absolute/path``; None if it is."""
    kind, sep, where = reference.partition(":")
    if not sep or kind not in ("env", "file") or not where:
        return f"expected {REFERENCE_HELP}, never the secret itself"
    if kind == "file" and not Path(where).is_absolute():
        return "a file reference needs an absolute path"
    return None


@dataclass(frozen=True)
class ClusterSecurity:
    """How clients authenticate to one cluster and verify it.

    ``sasl_password``, ``oauth_client_secret`` and ``ssl_key_password`` are
    references (``env:NAME`` / ``file:PATH``); the ``*_file`` settings are
    paths of PEM files every process using the cluster can read.
    """

    cluster: str
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str = ""
    sasl_username: str = ""
    sasl_password: str = ""
    oauth_token_endpoint: str = ""
    oauth_client_id: str = ""
    oauth_client_secret: str = ""
    oauth_scope: str = ""
    ssl_ca_file: str = ""
    ssl_cert_file: str = ""
    ssl_key_file: str = ""
    ssl_key_password: str = ""

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol.startswith("SASL_")

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol.endswith("SSL")

    def problems(self) -> dict[str, str]:
        """Each setting that does not fit the others, with why (the model's
        validation shows these next to the fields)."""
        found: dict[str, str] = {}
        if self.security_protocol not in PROTOCOLS:
            found["security_protocol"] = f"one of {', '.join(PROTOCOLS)}"
        if self.uses_sasl and self.sasl_mechanism not in MECHANISMS:
            found["sasl_mechanism"] = (
                f"{self.security_protocol} needs one of {', '.join(MECHANISMS)}"
            )
        if not self.uses_sasl and self.sasl_mechanism:
            found["sasl_mechanism"] = (
                f"only with SASL_PLAINTEXT or SASL_SSL, not {self.security_protocol}"
            )
        if self.uses_sasl and self.sasl_mechanism == "OAUTHBEARER":
            for name in ("oauth_token_endpoint", "oauth_client_id", "oauth_client_secret"):
                if not getattr(self, name):
                    found[name] = "OAUTHBEARER needs it"
        elif self.uses_sasl and self.sasl_mechanism:
            for name in ("sasl_username", "sasl_password"):
                if not getattr(self, name):
                    found[name] = f"{self.sasl_mechanism} needs it"
        if bool(self.ssl_cert_file) != bool(self.ssl_key_file):
            found["ssl_key_file"] = "a client certificate and its key go together"
        for name in SECRET_REFERENCES:
            if getattr(self, name) and (problem := reference_problem(getattr(self, name))):
                found[name] = problem
        return found

    def librdkafka(self) -> Masked:
        """Settings for confluent-kafka's clients, secrets read now."""
        self._check()
        settings = Masked({"security.protocol": self.security_protocol})
        if self.uses_sasl:
            settings["sasl.mechanism"] = self.sasl_mechanism
            if self.sasl_mechanism == "OAUTHBEARER":
                settings |= {
                    "sasl.oauthbearer.method": "oidc",
                    "sasl.oauthbearer.token.endpoint.url": self.oauth_token_endpoint,
                    "sasl.oauthbearer.client.id": self.oauth_client_id,
                    "sasl.oauthbearer.client.secret": self._secret("oauth_client_secret"),
                }
                if self.oauth_scope:
                    settings["sasl.oauthbearer.scope"] = self.oauth_scope
            else:
                settings["sasl.username"] = self.sasl_username
                settings["sasl.password"] = self._secret("sasl_password")
        if self.uses_tls:
            settings |= self._librdkafka_tls()
        return settings

    def java(self) -> Masked:
        """The same for the Java client (Spark's Kafka source), without the
        ``kafka.`` prefix Spark's options add."""
        self._check()
        settings = Masked({"security.protocol": self.security_protocol})
        if self.uses_sasl:
            settings["sasl.mechanism"] = self.sasl_mechanism
            settings["sasl.jaas.config"] = self._jaas()
            if self.sasl_mechanism == "OAUTHBEARER":
                settings["sasl.oauthbearer.token.endpoint.url"] = self.oauth_token_endpoint
                settings["sasl.login.callback.handler.class"] = _OIDC_HANDLER
        if self.uses_tls and self.ssl_ca_file:
            settings["ssl.truststore.type"] = "PEM"
            settings["ssl.truststore.location"] = self._readable("ssl_ca_file")
        if self.uses_tls and self.ssl_cert_file:
            settings |= {
                "ssl.keystore.type": "PEM",
                "ssl.keystore.certificate.chain": self._file_text("ssl_cert_file"),
                "ssl.keystore.key": self._file_text("ssl_key_file"),
            }
            if self.ssl_key_password:
                settings["ssl.key.password"] = self._secret("ssl_key_password")
        return settings

    def _check(self) -> None:
        for setting, problem in self.problems().items():
            raise ClusterSettingError(self.cluster, setting, problem)

    def _librdkafka_tls(self) -> dict[str, str]:
        settings = {}
        if self.ssl_ca_file:
            settings["ssl.ca.location"] = self._readable("ssl_ca_file")
        if self.ssl_cert_file:
            settings["ssl.certificate.location"] = self._readable("ssl_cert_file")
            settings["ssl.key.location"] = self._readable("ssl_key_file")
        if self.ssl_key_password:
            settings["ssl.key.password"] = self._secret("ssl_key_password")
        return settings

    def _jaas(self) -> str:
        module = _JAAS_MODULES[self.sasl_mechanism]
        if self.sasl_mechanism == "OAUTHBEARER":
            options = {
                "clientId": self.oauth_client_id,
                "clientSecret": self._secret("oauth_client_secret"),
            }
            if self.oauth_scope:
                options["scope"] = self.oauth_scope
        else:
            options = {"username": self.sasl_username, "password": self._secret("sasl_password")}
        quoted = " ".join(f'{key}="{_jaas_escape(value)}"' for key, value in options.items())
        return f"{module} required {quoted};"

    def _secret(self, setting: str) -> str:
        return read_secret(self.cluster, setting, getattr(self, setting))

    def _readable(self, setting: str) -> str:
        path = getattr(self, setting)
        if not os.access(path, os.R_OK):
            raise ClusterSettingError(self.cluster, setting, _unreadable(path))
        return path

    def _file_text(self, setting: str) -> str:
        return _read_text(self.cluster, setting, getattr(self, setting))


def read_secret(cluster: str, setting: str, reference: str) -> str:
    """The secret ``reference`` (env:NAME or file:PATH) points at, read now; one
    trailing newline (what ``echo`` and most secret mounts add) is not part of it."""
    kind, _, where = reference.partition(":")
    if kind == "env":
        value = os.environ.get(where)
        if not value:
            raise ClusterSettingError(
                cluster,
                setting,
                f"environment variable {where} is not set (or empty); set it for every "
                "kmqadmin process (web, worker, beat, pipeline) or change the reference",
            )
        return value
    return _read_text(cluster, setting, where).removesuffix("\n").removesuffix("\r")


def _read_text(cluster: str, setting: str, path: str) -> str:
    try:
        return Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ClusterSettingError(cluster, setting, _unreadable(path, exc)) from None


def _unreadable(path: str, exc: Exception | None = None) -> str:
    why = getattr(exc, "strerror", None) or (str(exc) if exc else "missing or not readable")
    return f"cannot read file {path} ({why}) as the user kmqadmin runs as"


def _jaas_escape(value: str) -> str:
    """JAAS options are double-quoted strings with backslash escapes."""
    return value.replace("\\", "\\\\").replace('"', '\\"')
