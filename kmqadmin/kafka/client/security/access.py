"""A bounded check that a secured cluster lets us in, before any client
of ours is made with its settings.

librdkafka retries a refused login for ever, logging each attempt; a
client made with a wrong password or CA would fill the logs and never say
which cluster or setting is wrong. One metadata request first turns a
refused login or a failed TLS handshake into one ClusterSettingError.
"""

import threading
import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

from kmqadmin.kafka.client.config import client_config
from kmqadmin.kafka.client.errors import BrokerUnavailable, ClusterSettingError
from kmqadmin.kafka.client.security.cluster import ClusterSecurity

ATTEMPT_S = 0.5
_DENIED = {KafkaError._AUTHENTICATION, KafkaError._SSL}
_verified: set[tuple[str, frozenset[tuple[str, Any]]]] = set()
_lock = threading.Lock()


def verify_access(
    bootstrap_servers: str,
    security: ClusterSecurity,
    settings: Mapping[str, Any],
    timeout: float = 10.0,
) -> None:
    """Returns once the cluster answered metadata with ``settings`` (once per
    process and settings); raises ClusterSettingError on a refused login or
    TLS handshake, BrokerUnavailable when nothing answered in ``timeout``."""
    key = (bootstrap_servers, frozenset(settings.items()))
    with _lock:
        if key in _verified:
            return
    refused: list[KafkaError] = []
    admin = AdminClient(
        client_config(bootstrap_servers, {**settings, "log_level": 0, "error_cb": refused.append})
    )
    deadline = time.monotonic() + timeout
    while True:
        try:
            admin.list_topics(timeout=ATTEMPT_S)
            break
        except KafkaException as exc:
            admin.poll(0)  # serves error_cb
            if denied := [e for e in refused if e.code() in _DENIED]:
                raise _explained(security, denied[0]) from None
            if time.monotonic() >= deadline:
                raise BrokerUnavailable(bootstrap_servers, exc.args[0].str()) from None
    with _lock:
        _verified.add(key)


def _explained(security: ClusterSecurity, error: KafkaError) -> ClusterSettingError:
    detail = error.str().split(": ", 1)[-1]
    if error.code() != KafkaError._AUTHENTICATION:
        problem = f"TLS handshake failed ({detail}); check them"
        return ClusterSettingError(security.cluster, "ssl_ca_file / ssl_cert_file", problem)
    if security.sasl_mechanism == "OAUTHBEARER":
        who = f"client {security.oauth_client_id}"
        settings = f"oauth_client_id / oauth_client_secret ({security.oauth_client_secret})"
    else:
        who = f"user {security.sasl_username}"
        settings = f"sasl_username / sasl_password ({security.sasl_password})"
    problem = f"{security.sasl_mechanism} login as {who} refused ({detail}); check them"
    return ClusterSettingError(security.cluster, settings, problem)
