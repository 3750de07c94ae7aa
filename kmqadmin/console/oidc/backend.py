"""The authentication backend of the browser's sign-in: mozilla-django-oidc's
code flow (state, nonce, PKCE, the id token checked on the provider's keys),
with the provider's endpoints from its discovery document and the user found
by issuer and subject (identities.py) instead of by email."""

from typing import Any

import jwt
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from kmqadmin.console.oidc.identities import Refused, signed_in
from kmqadmin.console.oidc.provider import Provider, configured


class SsoBackend(OIDCAuthenticationBackend):
    """Django builds every backend for every authenticate() call, a password
    login's too: nothing here reaches the provider but the callback's call,
    so a provider that is down never breaks local login."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.UserModel = get_user_model()
        self.provider: Provider | None = configured()

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> AbstractBaseUser | None:
        """Only the callback's call, which alone passes the nonce: a password
        login posted to a URL with ?code= must not reach the provider (its
        errors would escape authenticate() before the failed attempt is
        counted, an unthrottled password oracle)."""
        if request is None or self.provider is None or "nonce" not in kwargs:
            return None
        metadata = self.provider.metadata()  # ProviderUnavailable goes up to the view
        self.issuer = metadata["issuer"]
        self.OIDC_OP_TOKEN_ENDPOINT = metadata["token_endpoint"]
        self.OIDC_OP_USER_ENDPOINT = metadata["userinfo_endpoint"]
        self.OIDC_OP_JWKS_ENDPOINT = metadata["jwks_uri"]
        self.OIDC_RP_CLIENT_ID = self.provider.client_id
        self.OIDC_RP_CLIENT_SECRET = self.provider.client_secret
        self.OIDC_RP_SIGN_ALGO = self.get_settings("OIDC_RP_SIGN_ALGO")
        self.OIDC_RP_IDP_SIGN_KEY = None
        return super().authenticate(request, **kwargs)

    def _verify_jws(self, payload: str, key: Any) -> dict[str, Any]:
        """The id token's signature, and what mozilla-django-oidc leaves
        unchecked (OpenID Connect Core 1.0 §3.1.3.7): it was issued by our
        issuer, for our client, and has not expired."""
        assert self.provider is not None
        try:
            return jwt.decode(
                payload,
                key,
                algorithms=[self.OIDC_RP_SIGN_ALGO],
                audience=self.provider.client_id,
                issuer=self.issuer,
                options={"require": ["exp", "iat", "iss", "aud", "sub"]},
            )
        except jwt.PyJWTError as exc:
            raise SuspiciousOperation(f"the id token did not verify: {exc}") from exc

    def get_or_create_user(
        self, access_token: str, id_token: str, payload: dict[str, Any]
    ) -> AbstractBaseUser:
        """The userinfo's claims, as the id token's subject; Refused goes up
        to the view, which shows the person why."""
        assert self.provider is not None
        claims = self.get_userinfo(access_token, id_token, payload)
        if claims.get("sub") != payload.get("sub"):
            # OpenID Connect Core 1.0 §5.3.2: userinfo of someone else must not be used.
            raise Refused(f"{self.provider.name} answered for someone else.")
        return signed_in(self.provider, claims)
