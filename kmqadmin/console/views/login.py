"""Logging in and out: a password kept here (as KMQ_LOCAL_LOGIN allows), and
"Sign in with <provider>" when single sign-on is configured, with why it
cannot be used right now when the provider does not answer; logging out of
a session the provider signed in ends the provider's session too."""

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.signals import user_login_failed
from django.contrib.auth.views import LoginView, LogoutView
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import resolve_url
from django.template.response import TemplateResponse

from kmqadmin.console.oidc.provider import ProviderUnavailable, configured
from kmqadmin.console.services.roles import Role, role_of

TEMPLATE = "registration/login.html"


class PasswordForm(AuthenticationForm):
    """Django's login form, refusing whom KMQ_LOCAL_LOGIN leaves out."""

    def clean(self) -> dict[str, Any]:
        mode = settings.KMQ_LOCAL_LOGIN
        if mode == "off":
            raise forms.ValidationError(_elsewhere("Password login is switched off here."))
        username = self.cleaned_data.get("username")
        if mode == "admins" and username and not _is_admin(username):
            # Refused before the password is looked at, in the words a wrong
            # password gets: the answer tells nothing of the password, and the
            # attempt is counted (audit, lockout) as a failed login.
            user_login_failed.send(
                sender=__name__, credentials={"username": username}, request=self.request
            )
            raise self.get_invalid_login_error()
        return super().clean()


def _is_admin(username: str) -> bool:
    user = get_user_model().objects.filter(username=username).first()
    return user is not None and role_of(user) >= Role.ADMIN


def _elsewhere(why: str) -> str:
    provider = configured()
    return f"{why} Sign in with {provider.name}." if provider else why


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


def sso_context(error: str = "") -> dict[str, Any]:
    """What the login page shows of single sign-on: the button, and an error
    (``error``, else why the provider cannot be used now)."""
    provider = configured()
    if provider is None:
        return {"sso": None, "local_login": settings.KMQ_LOCAL_LOGIN}
    if not error:
        try:
            provider.metadata()
        except ProviderUnavailable as exc:
            error = f"Sign-in with {provider.name} is unavailable: {exc}"
    return {
        "sso": {"name": provider.name, "error": error},
        "local_login": settings.KMQ_LOCAL_LOGIN,
    }


def login_page(request: HttpRequest, error: str, status: int) -> HttpResponse:
    """The login page with ``error``, for a sign-in that went wrong: the person
    can read why, and an admin can still log in with a password."""
    context = {
        "form": PasswordForm(request),
        "next": request.session.get("oidc_login_next") or "",
        **sso_context(error),
    }
    return TemplateResponse(request, TEMPLATE, context, status=status)
