"""The login page as both ways in show it: the password form (refusing whom
KMQ_LOCAL_LOGIN leaves out), "Sign in with <provider>" and why it cannot be
used right now. Here, beside the sign-in views, because a sign-in that went
wrong shows it too (views/login.py serves it for the password)."""

from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.signals import user_login_failed
from django.http import HttpRequest, HttpResponse
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
