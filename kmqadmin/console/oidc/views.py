"""The two steps of the browser's sign-in, mozilla-django-oidc's views with
the provider's endpoints from discovery, and every way a sign-in can fail
shown to the person on the login page, never as a server error."""

import logging
import re
from datetime import timedelta
from typing import Any

import jwt
import requests
from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.views import View
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from kmqadmin.console.oidc.identities import Refused
from kmqadmin.console.oidc.login_page import login_page
from kmqadmin.console.oidc.provider import Provider, ProviderUnavailable, configured
from kmqadmin.console.services.audit import trail as audit

log = logging.getLogger(__name__)


def _provider() -> Provider:
    provider = configured()
    if provider is None:
        raise Http404("single sign-on is not configured (KMQ_OIDC_ISSUER)")
    return provider


class SignIn(OIDCAuthenticationRequestView):
    """Sends the browser to the provider's login, with state, nonce and PKCE."""

    def __init__(self, **kwargs: Any) -> None:
        View.__init__(self, **kwargs)  # the endpoint is read per request, from discovery

    def get(self, request: HttpRequest) -> HttpResponse:
        provider = _provider()
        try:
            metadata = provider.metadata()
        except ProviderUnavailable as exc:
            log.warning("sign-in with %s: %s", provider.name, exc)
            return login_page(request, f"Sign-in with {provider.name} is unavailable: {exc}", 502)
        self.OIDC_OP_AUTH_ENDPOINT = metadata["authorization_endpoint"]
        self.OIDC_RP_CLIENT_ID = provider.client_id
        return super().get(request)


class Callback(OIDCAuthenticationCallbackView):
    """Where the provider sends the browser back with a code."""

    def get(self, request: HttpRequest) -> HttpResponse:
        provider = _provider()
        if "error" in request.GET:
            # The provider said no. The library would log out whoever is signed
            # in here, which any page could make a browser do (a logout CSRF).
            request.session.get("oidc_states", {}).pop(request.GET.get("state"), None)
            request.session.modified = True
            return self.login_failure()
        try:
            return super().get(request)
        except Refused as exc:
            return _refused(request, provider, str(exc))
        except requests.HTTPError as exc:  # the token endpoint refused the code
            status = exc.response.status_code if exc.response is not None else "?"
            return _failed(request, provider, f"{provider.name} refused it (HTTP {status})", 400)
        except (ProviderUnavailable, requests.RequestException) as exc:
            return _failed(request, provider, f"{provider.name} could not be reached: {exc}", 502)
        except (SuspiciousOperation, jwt.PyJWTError) as exc:
            return _failed(request, provider, f"it did not verify: {exc}", 400)

    def login_success(self) -> HttpResponse:
        """Signed in until KMQ_OIDC_SESSION_S from now however busy: then the
        browser signs in at the provider again (at once, while its session
        there lasts), and roles removed there since are removed here."""
        response = super().login_success()
        lasts = timedelta(seconds=settings.KMQ_OIDC_SESSION_S)
        self.request.session.set_expiry(timezone.now() + lasts)
        return response

    def login_failure(self) -> HttpResponse:
        """The provider said no (the person cancelled, say) or the sign-in
        was not started here: back to the login page, saying so."""
        provider = _provider()
        said = self.request.GET.get("error", "")
        # Only an OAuth error code (RFC 6749 §4.1.2.1), never free text anyone
        # could put on our page through a link.
        why = (
            f"{provider.name} said {said}"
            if ERROR_CODE.fullmatch(said)
            else "it was not started from this page"
        )
        return _failed(self.request, provider, why, 400)


ERROR_CODE = re.compile(r"[a-z_]{1,40}")


def _failed(request: HttpRequest, provider: Provider, why: str, status: int) -> HttpResponse:
    log.warning("sign-in with %s failed: %s", provider.name, why)
    audit.record(None, "login", f"via {provider.name}", error=why)
    return login_page(request, f"Sign-in with {provider.name} did not complete: {why}.", status)


def _refused(request: HttpRequest, provider: Provider, reason: str) -> HttpResponse:
    log.warning("sign-in with %s refused: %s", provider.name, reason)
    audit.record(None, "login", f"via {provider.name}", error=reason)
    return TemplateResponse(
        request, "registration/sso_refused.html", {"reason": reason}, status=403
    )
