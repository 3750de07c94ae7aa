"""The two steps of the browser's sign-in, mozilla-django-oidc's views with
the provider's endpoints from discovery, and every way a sign-in can fail
shown to the person on the login page, never as a server error."""

import logging
from typing import Any

import jwt
import requests
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.views import View
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from kmqadmin.console.views.login import login_page

from .identities import Refused
from .provider import Provider, ProviderUnavailable, configured

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
        try:
            return super().get(request)
        except Refused as exc:
            log.warning("sign-in with %s refused: %s", provider.name, exc)
            return TemplateResponse(
                request, "registration/sso_refused.html", {"reason": str(exc)}, status=403
            )
        except (ProviderUnavailable, requests.RequestException) as exc:
            log.warning("sign-in with %s: the provider failed: %s", provider.name, exc)
            return login_page(request, f"{provider.name} could not be reached: {exc}", 502)
        except (SuspiciousOperation, jwt.PyJWTError) as exc:
            log.warning("sign-in with %s did not verify: %s", provider.name, exc)
            return login_page(request, f"Sign-in with {provider.name} failed: {exc}", 400)

    def login_failure(self) -> HttpResponse:
        """The provider said no (the person cancelled, say) or the sign-in
        was not started here: back to the login page, saying so."""
        provider = _provider()
        said = self.request.GET.get("error_description") or self.request.GET.get("error")
        why = f"{provider.name} said: {said[:200]}" if said else "it was not started from this page"
        error = f"Sign-in with {provider.name} did not complete: {why}."
        return login_page(self.request, error, 400)
