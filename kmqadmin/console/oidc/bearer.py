"""The API's bearer tokens: an access token the identity provider issued,
taken when KMQ_OIDC_ISSUER is set (services keep their API tokens too).

Checked here, not by asking the provider per request: its signature on the
provider's published keys (PyJWT's PyJWKClient keeps them, and fetches
them again for a key id it has not seen, as a rotation brings), our
audience, our issuer, its expiry. Its groups give the caller's role, as a
browser sign-in's do (identities.py)."""

import threading
from typing import Any

import jwt
from django.contrib.auth.base_user import AbstractBaseUser
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request

from kmqadmin.console.oidc.identities import Refused, signed_in
from kmqadmin.console.oidc.provider import Provider, ProviderUnavailable, configured

KEYS_KEPT_S = 300
# Asymmetric only: an HS256 token would be checked with a secret anyone
# holding the client secret knows.
ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"]


class ProviderDown(exceptions.APIException):
    status_code = 503
    default_code = "identity_provider_unavailable"


class BearerAuthentication(BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[AbstractBaseUser, dict] | None:
        provider = configured()
        parts = get_authorization_header(request).split()
        if provider is None or not parts or parts[0].lower() != b"bearer":
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Authorization: Bearer takes one token.")
        claims = verified(provider, parts[1].decode("latin-1"))
        try:
            return signed_in(provider, claims), claims
        except Refused as exc:
            raise exceptions.PermissionDenied(str(exc)) from exc

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="api"'


class BearerScheme(OpenApiAuthenticationExtension):
    """How the OpenAPI schema names it (defined beside the class it
    describes, so it is registered whenever the class is in use)."""

    target_class = BearerAuthentication
    name = "oidcBearer"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT",
            "description": "An access token of the identity provider KMQ_OIDC_ISSUER names.",
        }


def verified(provider: Provider, token: str) -> dict[str, Any]:
    """The token's claims, or AuthenticationFailed saying what is wrong."""
    try:
        unverified = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError as exc:
        raise exceptions.AuthenticationFailed(f"The bearer token is not a JWT: {exc}") from exc
    try:
        metadata = provider.metadata()
    except ProviderUnavailable as exc:
        raise ProviderDown(f"The identity provider cannot be used now: {exc}") from exc
    issuer = metadata["issuer"]  # exactly as the provider writes it in its tokens
    if unverified.get("iss") != issuer:
        raise exceptions.AuthenticationFailed(
            f"The bearer token was issued by {unverified.get('iss')!r}, not by {issuer}."
        )
    if _is_id_token(unverified):
        raise exceptions.AuthenticationFailed(
            "The bearer token is an ID token, which says who signed in to an application; "
            "send an access token."
        )
    try:
        key = _keys(metadata["jwks_uri"]).get_signing_key_from_jwt(token)
    except jwt.PyJWKClientConnectionError as exc:
        raise ProviderDown(f"The identity provider's keys cannot be read: {exc}") from exc
    except (ValueError, OSError) as exc:  # PyJWT lets a page that is not JSON, or a reset, by
        raise ProviderDown(f"The identity provider's keys cannot be read: {exc!r}") from exc
    except jwt.PyJWTError as exc:
        raise exceptions.AuthenticationFailed(f"The bearer token did not verify: {exc}") from exc
    try:
        return jwt.decode(
            token,
            key,
            algorithms=ALGORITHMS,
            audience=provider.audience,
            issuer=issuer,
            options={"require": ["exp", "iat", "iss", "aud", "sub"]},
        )
    except jwt.ExpiredSignatureError as exc:
        raise exceptions.AuthenticationFailed("The bearer token has expired.") from exc
    except jwt.InvalidAudienceError as exc:
        raise exceptions.AuthenticationFailed(
            f"The bearer token is not for this API (its aud lacks {provider.audience!r})."
        ) from exc
    except jwt.PyJWTError as exc:
        raise exceptions.AuthenticationFailed(f"The bearer token did not verify: {exc}") from exc


def _is_id_token(claims: dict[str, Any]) -> bool:
    """An ID token's aud is the client too, so the audience check alone
    would take it: Keycloak marks it typ ID, and only ID tokens carry the
    code flow's nonce or an access token's hash (OpenID Connect Core §2)."""
    return claims.get("typ") == "ID" or "nonce" in claims or "at_hash" in claims


_clients: dict[str, jwt.PyJWKClient] = {}
_clients_lock = threading.Lock()


def _keys(jwks_uri: str) -> jwt.PyJWKClient:
    with _clients_lock:
        if jwks_uri not in _clients:
            _clients[jwks_uri] = jwt.PyJWKClient(jwks_uri, lifespan=KEYS_KEPT_S, timeout=5)
        return _clients[jwks_uri]
