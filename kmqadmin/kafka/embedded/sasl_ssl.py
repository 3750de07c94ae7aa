"""The secured listener a test of a secured cluster adds to a node."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class SaslSslListener:
    """A second listener, SASL_SSL with SCRAM-SHA-512, for tests of secured
    clusters; the PLAINTEXT one stays for the broker's own readiness check.

    ``keystore``: PEM file with the broker's unencrypted PKCS#8 key and its
    certificate; ``truststore``: the PEM CA that signed the clients'
    certificates (client certificates are then required); ``users``:
    SCRAM-SHA-512 user name to password, created when the storage is
    formatted.
    """

    keystore: Path
    users: Mapping[str, str]
    truststore: Path | None = None
    port: int = field(default=0, compare=False)

    def settings(self) -> dict[str, str]:
        prefix = "listener.name.sasl_ssl."
        found = {
            "sasl.enabled.mechanisms": "SCRAM-SHA-512",
            f"{prefix}scram-sha-512.sasl.jaas.config": (
                "org.apache.kafka.common.security.scram.ScramLoginModule required;"
            ),
            f"{prefix}ssl.keystore.type": "PEM",
            f"{prefix}ssl.keystore.location": str(self.keystore),
        }
        if self.truststore is not None:
            found |= {
                f"{prefix}ssl.truststore.type": "PEM",
                f"{prefix}ssl.truststore.location": str(self.truststore),
                f"{prefix}ssl.client.auth": "required",
            }
        return found

    def scram_arguments(self) -> list[str]:
        return [
            arg
            for name, password in self.users.items()
            for arg in ("--add-scram", f"SCRAM-SHA-512=[name={name},password={password}]")
        ]
