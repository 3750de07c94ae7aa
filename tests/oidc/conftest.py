"""The OIDC tests' identity provider: one Keycloak for the session (some 12 s
to start), its realms as tests/oidc/realms describes them."""

from collections.abc import Iterator

import pytest

from tests.keycloak import KeycloakServer


@pytest.fixture(scope="session")
def keycloak() -> Iterator[KeycloakServer]:
    with KeycloakServer() as server:
        yield server
