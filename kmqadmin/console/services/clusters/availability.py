"""Whether a cluster answers, known before a page waits on it.

A page's clients wait up to 10 s on a broker that is away, and a stalled one
(SIGSTOP, a network partition) accepts connections it never answers: every
page and live view would spin that long before saying anything. So before a
request takes a kept client, the cluster must have answered metadata within
the last REMEMBER_S; if it has not, one request asks (bounded to PROBE_S)
while the others wait for that answer, and an answer of "away" is kept for
REMEMBER_S too. A request therefore learns that Kafka is away within PROBE_S,
and the pages say since when.
"""

import logging
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from kmqadmin.kafka.admin.topics import admin_client, cluster_metadata
from kmqadmin.kafka.client.errors import KafkaSetupError
from kmqadmin.kafka.client.security.masking import Masked

log = logging.getLogger(__name__)

PROBE_S = 1.5
REMEMBER_S = 2.0
# How soon a client told "away" should ask again (the Retry-After header).
RETRY_AFTER_S = 5


class KafkaAway(KafkaSetupError):
    """The cluster did not answer metadata; ``since`` is when it first did not."""

    def __init__(self, bootstrap: str, since: datetime, detail: str) -> None:
        self.bootstrap, self.since = bootstrap, since
        super().__init__(
            f"Disconnected from Kafka at {bootstrap} since {since:%H:%M:%S} UTC ({detail})"
        )


@dataclass
class _Known:
    checked: float = -REMEMBER_S
    error: str | None = None
    away_since: datetime | None = None


_known: dict[str, _Known] = {}
_locks: dict[str, threading.Lock] = {}
_guard = threading.Lock()


def require(bootstrap: str, kafka_config: Masked) -> None:
    """Returns when the cluster answered lately (asking it first if no one
    has for REMEMBER_S); KafkaAway when it did not."""
    with _guard:
        lock = _locks.setdefault(bootstrap, threading.Lock())
        known = _known.setdefault(bootstrap, _Known())
    with lock:
        if time.monotonic() - known.checked >= REMEMBER_S:
            _ask(bootstrap, kafka_config, known)
        error, since = known.error, known.away_since
    if error is not None and since is not None:
        raise KafkaAway(bootstrap, since, error)


def _ask(bootstrap: str, kafka_config: Masked, known: _Known) -> None:
    try:
        cluster_metadata(bootstrap, PROBE_S, admin_client(bootstrap, kafka_config))
    except KafkaSetupError as exc:
        known.error = _cause(str(exc))
        if known.away_since is None:
            known.away_since = datetime.now(UTC)
            log.warning("Kafka at %s does not answer (%s)", bootstrap, known.error)
    else:
        if known.away_since is not None:
            away_s = (datetime.now(UTC) - known.away_since).total_seconds()
            log.warning("Kafka at %s answers again after %.0f s", bootstrap, away_s)
        known.error = known.away_since = None
    known.checked = time.monotonic()


def _cause(message: str) -> str:
    """librdkafka's reason, without BrokerUnavailable's advice on which
    variable to set: the page names the cluster, and `kmq doctor` the fix."""
    start, end = message.find("("), message.rfind(")")
    return message[start + 1 : end] if 0 <= start < end else message
