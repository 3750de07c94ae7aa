"""A librdkafka configuration, as kafka-python's admin client takes it.

confluent-kafka has no share-group admin calls (KIP-932's ShareGroupDescribe,
DescribeShareGroupOffsets, AlterShareGroupOffsets), so those go over the
Kafka protocol through kafka-python. It must reach the cluster exactly as
every other client does: this turns the settings a queue carries (built by
``ClusterSecurity.librdkafka()``) into kafka-python's names. What it cannot
carry over is refused by name rather than silently dropped, so an admin call
never connects with weaker settings than the queue's own clients.
"""

from collections.abc import Mapping
from typing import Any

from kmqadmin.kafka.client.clock import to_ms
from kmqadmin.kafka.client.errors import KafkaSetupError

# Mechanisms kafka-python takes from plain settings: OAUTHBEARER would need a
# token provider object of its own, GSSAPI a Kerberos setup.
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")

_RENAMED = {
    "security.protocol": "security_protocol",
    "client.id": "client_id",
    "sasl.username": "sasl_plain_username",
    "sasl.password": "sasl_plain_password",
    "ssl.ca.location": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
    "ssl.crl.location": "ssl_crlfile",
}
# Settings about how a client authenticates or verifies the broker: one of
# these that is not mapped above must not be dropped. Anything else is
# librdkafka tuning with no bearing on how an admin request connects.
_SECURITY_PREFIXES = ("sasl.", "ssl.", "security.")


class UnsupportedSetting(KafkaSetupError):
    """A cluster setting the protocol client cannot honour."""


def protocol_config(
    bootstrap_servers: str, extra: Mapping[str, Any] | None, timeout_s: float
) -> dict[str, Any]:
    """kafka-python KafkaAdminClient keyword arguments for the same cluster,
    every wait bounded by ``timeout_s``."""
    ms = to_ms(timeout_s)
    config: dict[str, Any] = {
        "bootstrap_servers": bootstrap_servers.split(","),
        "client_id": "kmqadmin",
        "request_timeout_ms": ms,
        "bootstrap_timeout_ms": ms,
        "reconnect_backoff_max_ms": 1000,
    }
    for key, value in (extra or {}).items():
        if key in _RENAMED:
            config[_RENAMED[key]] = str(value)
        elif key == "sasl.mechanism" or key == "sasl.mechanisms":
            config["sasl_mechanism"] = _mechanism(str(value))
        elif key == "ssl.endpoint.identification.algorithm":
            config["ssl_check_hostname"] = str(value).lower() != "none"
        elif key.startswith(_SECURITY_PREFIXES):
            raise UnsupportedSetting(
                f"Kafka setting {key!r} has no equivalent in the share-group admin "
                "client (kafka-python); remove it or ask for it to be supported"
            )
    return config


def _mechanism(name: str) -> str:
    if name.upper() not in MECHANISMS:
        raise UnsupportedSetting(
            f"SASL mechanism {name} is not supported for share-group admin calls "
            f"(kafka-python needs one of {', '.join(MECHANISMS)})"
        )
    return name.upper()
