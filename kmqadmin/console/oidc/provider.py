"""The identity provider as settings name it, and what it publishes about
itself (OpenID Connect Discovery): where to send the browser, where to
redeem a code, where its keys are.

Discovery is read when first needed, not at start-up, and kept: a provider
that is down must not keep the web process from starting, nor slow every
page, and local login must go on working meanwhile (KMQ_LOCAL_LOGIN)."""

import threading
import time
from dataclasses import dataclass
from typing import Any

import requests
from django.conf import settings

# A good document is kept this long (a provider rotates keys, not endpoints);
# a failure this long, so a down provider costs one wait per interval.
KEEP_S = 300.0
RETRY_S = 15.0
TIMEOUT_S = 3.0
NEEDED = ("issuer", "authorization_endpoint", "token_endpoint", "jwks_uri", "userinfo_endpoint")


class ProviderUnavailable(Exception):
    """The provider cannot be used now; the message says why and what to check."""


@dataclass(frozen=True)
class Provider:
    issuer: str
    client_id: str
    client_secret: str
    name: str
    groups_claim: str
    role_groups: dict[str, str]  # provider group -> role name
    audience: str

    def metadata(self) -> dict[str, Any]:
        """The discovery document, checked (ProviderUnavailable if not usable)."""
        return _discovery.get(self.issuer)


def configured() -> Provider | None:
    """The provider settings name, None when single sign-on is off."""
    if not settings.KMQ_OIDC_ISSUER:
        return None
    return Provider(
        issuer=settings.KMQ_OIDC_ISSUER,
        client_id=settings.KMQ_OIDC_CLIENT_ID,
        client_secret=settings.KMQ_OIDC_CLIENT_SECRET,
        name=settings.KMQ_OIDC_PROVIDER_NAME,
        groups_claim=settings.KMQ_OIDC_GROUPS_CLAIM,
        role_groups=settings.KMQ_OIDC_ROLE_GROUPS,
        audience=settings.KMQ_OIDC_AUDIENCE,
    )


class _Discovery:
    """Documents by issuer, each with when it was read, or why it could not be.

    No request waits on another's read: while one refreshes a document, the
    others go on with the one known (a slow provider slows one request per
    interval, not the login page for everyone)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[str, tuple[float, dict[str, Any] | ProviderUnavailable]] = {}
        self._reading: set[str] = set()

    def get(self, issuer: str) -> dict[str, Any]:
        with self._lock:
            read_at, found = self._known.get(issuer, (float("-inf"), None))
            fresh_for = RETRY_S if isinstance(found, ProviderUnavailable) else KEEP_S
            refresh = time.monotonic() - read_at > fresh_for and issuer not in self._reading
            if refresh:
                self._reading.add(issuer)
        if refresh or found is None:  # none known yet: this request cannot go on without it
            try:
                found = _read(issuer)
            finally:
                if refresh:
                    with self._lock:
                        self._reading.discard(issuer)
            with self._lock:
                self._known[issuer] = (time.monotonic(), found)
        if isinstance(found, ProviderUnavailable):
            raise found
        return found

    def forget(self) -> None:
        """For tests that point one process at several providers."""
        with self._lock:
            self._known.clear()


_discovery = _Discovery()
forget = _discovery.forget


def _read(issuer: str) -> dict[str, Any] | ProviderUnavailable:
    url = f"{issuer}/.well-known/openid-configuration"
    try:
        answer = requests.get(url, timeout=TIMEOUT_S)
        answer.raise_for_status()
        document = answer.json()
    except requests.RequestException as exc:
        return ProviderUnavailable(f"{url} did not answer: {_reason(exc)}")
    except ValueError:
        return ProviderUnavailable(f"{url} answered with something that is not JSON")
    if not isinstance(document, dict) or any(
        not isinstance(document.get(k), str) or not document[k] for k in NEEDED
    ):
        return ProviderUnavailable(f"{url} lacks one of {', '.join(NEEDED)}")
    if document["issuer"].rstrip("/") != issuer:
        # OpenID Connect Discovery 1.0 §4.3: a mismatch must not be used.
        return ProviderUnavailable(
            f"{url} names its issuer {document['issuer']!r}, not KMQ_OIDC_ISSUER {issuer!r}"
        )
    return document


def _reason(exc: requests.RequestException) -> str:
    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        return f"HTTP {exc.response.status_code}"
    if isinstance(exc, requests.Timeout):
        return f"no answer within {TIMEOUT_S:.0f} s"
    if isinstance(exc, requests.ConnectionError):
        return "connection refused or host unknown"
    return type(exc).__name__
