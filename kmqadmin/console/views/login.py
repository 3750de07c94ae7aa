"""Logging in and out: a password kept here (as KMQ_LOCAL_LOGIN allows), and
"Sign in with <provider>" when single sign-on is configured, with why it
cannot be used right now when the provider does not answer; logging out of
a session the provider signed in ends the provider's session too."""

from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.views import LoginView, LogoutView
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import resolve_url

from kmqadmin.console.oidc.login_page import TEMPLATE, PasswordForm, sso_context
from kmqadmin.console.oidc.provider import ProviderUnavailable, configured


class Login(LoginView):
    form_class = PasswordForm
    template_name = TEMPLATE

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**super().get_context_data(**kwargs), **sso_context()}


class Logout(LogoutView):
    """Django's logout, then, for a session the provider signed in, its
    end-session endpoint (OpenID Connect RP-Initiated Logout): without it
    "Sign in with" would let the same person straight back in, on a
    shared machine anyone at it."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        id_token = request.session.get("oidc_id_token")
        response = super().post(request, *args, **kwargs)
        provider = configured()
        if not id_token or provider is None:
            return response
        try:
            end_session = provider.metadata().get("end_session_endpoint")
        except ProviderUnavailable:
            return response  # logged out here; the provider's session ends on its own
        if not isinstance(end_session, str) or not end_session:
            return response
        query = urlencode(
            {
                "id_token_hint": id_token,
                "client_id": provider.client_id,
                "post_logout_redirect_uri": request.build_absolute_uri(resolve_url("login")),
            }
        )
        return HttpResponseRedirect(f"{end_session}?{query}")
