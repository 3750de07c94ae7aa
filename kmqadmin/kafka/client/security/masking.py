"""Client settings that never show a secret when printed.

Configs are logged (a worker logs the QueueConfig of each service it
starts) and used as cache keys by their repr: every mapping of client
settings is wrapped in ``Masked`` so that text never holds a password,
a client secret, a JAAS line or a private key.
"""

import re
from collections.abc import Mapping
from typing import Any

MASK = "***"
# librdkafka's and the Java client's secret-bearing keys, with or without
# Spark's "kafka." prefix, and a schema registry client's basic.auth.user.info.
_SECRET = re.compile(r"password|secret|jaas|keystore\.key|key\.pem|oauthbearer\.config|user\.info")


def is_secret(key: str) -> bool:
    return _SECRET.search(key.lower()) is not None


class Masked(dict[str, Any]):
    """A dict of client settings whose repr (and so str) masks every secret.

    Equality still compares the real values, so a changed setting still
    makes a different config.
    """

    def __repr__(self) -> str:
        return repr({key: MASK if is_secret(key) else value for key, value in self.items()})


def masked(settings: Mapping[str, Any] | None) -> Masked:
    return settings if isinstance(settings, Masked) else Masked(settings or {})
