"""Where a cluster's schema registry is, apart from the decoder that calls it.

A cluster row carries these settings; the decoder (schema_decoding.py)
starts with confluent-kafka's registry client and protobuf, which every
process that loads the models would otherwise import.
"""

from dataclasses import dataclass, field

from kmqadmin.kafka.client.security.masking import Masked

# One registry request's bound: a page must not wait on a registry that is away.
REQUEST_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class RegistrySettings:
    """Where a cluster's schema registry is; ``password`` is the secret itself,
    read from its reference just before use and never stored."""

    url: str
    username: str = ""
    password: str = field(default="", repr=False)

    def client_config(self) -> Masked:
        config = Masked(url=self.url, timeout=REQUEST_TIMEOUT_S, **{"max.retries": 0})
        if self.username:
            config["basic.auth.user.info"] = f"{self.username}:{self.password}"
        return config
