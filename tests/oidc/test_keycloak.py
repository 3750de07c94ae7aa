"""The identity provider as the OIDC tests rely on it (tests/oidc/realms):
who is in which group, and which issuer, audience and lifetime their tokens
name. A test of the realms, not of kmqadmin: if one fails, the realm files or
Keycloak changed, not the product."""

import base64
import json
import urllib.error
import urllib.parse
import urllib.request

import pytest

from tests.keycloak import KeycloakServer


def claims(token: str) -> dict:
    """A JWT's payload, its signature unchecked: these tests read what
    Keycloak put in, kmqadmin's own tests check signatures."""
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def audience(token_claims: dict) -> list[str]:
    """``aud`` as a list: a token for one audience names it as a string."""
    aud = token_claims["aud"]
    return [aud] if isinstance(aud, str) else aud


def test_alices_token_names_the_issuer_kmqadmin_and_her_group(keycloak: KeycloakServer):
    alice = claims(keycloak.token("alice", "alice-password"))

    assert alice["iss"] == keycloak.issuer()
    assert "kmqadmin" in audience(alice)
    assert alice["groups"] == ["kmq-operators"]
    assert alice["preferred_username"] == "alice"


@pytest.mark.parametrize(
    ("user", "groups"),
    [("carol", ["kmq-admins"]), ("dave", ["kmq-viewers"]), ("bob", ["sales"])],
)
def test_each_user_is_in_one_group(keycloak: KeycloakServer, user: str, groups: list[str]):
    assert claims(keycloak.token(user, f"{user}-password"))["groups"] == groups


def test_short_lived_tokens_live_two_seconds(keycloak: KeycloakServer):
    token = claims(
        keycloak.token(
            "alice", "alice-password", client_id="short-lived", secret="short-lived-secret"
        )
    )

    assert token["exp"] - token["iat"] == 2
    assert "kmqadmin" in audience(token)
    assert token["groups"] == ["kmq-operators"]


def test_elsewhere_signs_for_its_own_issuer(keycloak: KeycloakServer):
    alice = claims(keycloak.token("alice", "alice-password", realm="elsewhere"))

    assert alice["iss"] == keycloak.issuer("elsewhere") != keycloak.issuer()
    assert "kmqadmin" in audience(alice)
    assert alice["groups"] == ["kmq-operators"]


def test_discovery_names_the_issuer(keycloak: KeycloakServer):
    discovery = f"{keycloak.issuer()}/.well-known/openid-configuration"
    with urllib.request.urlopen(discovery, timeout=10) as answer:
        assert json.load(answer)["issuer"] == keycloak.issuer()


def login_form(keycloak: KeycloakServer, redirect_uri: str) -> int:
    """The status of the authorization request a browser would be sent with."""
    query = urllib.parse.urlencode(
        {
            "client_id": "kmqadmin",
            "response_type": "code",
            "scope": "openid",
            "redirect_uri": redirect_uri,
        }
    )
    try:
        with urllib.request.urlopen(
            f"{keycloak.issuer()}/protocol/openid-connect/auth?{query}", timeout=10
        ) as answer:
            return answer.status
    except urllib.error.HTTPError as refused:
        return refused.code


@pytest.mark.parametrize(
    "redirect_uri", ["http://127.0.0.1:8123/oidc/callback", "http://localhost:41234/cb"]
)
def test_the_login_form_comes_back_to_any_loopback_port(
    keycloak: KeycloakServer, redirect_uri: str
):
    assert login_form(keycloak, redirect_uri) == 200


def test_the_login_form_comes_back_nowhere_else(keycloak: KeycloakServer):
    assert login_form(keycloak, "http://example.com/oidc/callback") == 400
