"""The admin site, audited: every add, change and delete made in /admin/ is
in the audit log, its intent written before the change and its outcome
after, by whom.

Django's own hooks for this, LogEntry and ModelAdmin.log_*, come too late
(after the save) or too early (log_deletions runs before the delete), and a
bulk delete's LogEntry rows are bulk-created, so no signal sees them. The
save and delete hooks wrap the change itself. Every ModelAdmin registered
here (auth's and DRF's included) gets them; AuditedAdminConfig (apps.py)
makes this the default site.
"""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import admin
from django.contrib.auth.views import redirect_to_login
from django.db.models import Model, QuerySet
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from rest_framework.authtoken.models import Token

from kmqadmin.console.services.audit import trail as audit


def described(obj: Model) -> str:
    """An object as its audit target: never a token's key (its str and pk)."""
    if isinstance(obj, Token):
        return audit.token_target(obj)
    return f"{obj._meta.label_lower} {obj}"


class AuditedModelAdmin:
    """Mixed into each registered ModelAdmin."""

    def save_model(self, request: HttpRequest, obj: Model, form: ModelForm, change: bool) -> None:
        action = "admin change" if change else "admin add"
        # Field names only: values may be secrets (a password hash, a token).
        after = {"changed": form.changed_data}
        with audit.action(request.user, action, described(obj), after=after):
            super().save_model(request, obj, form, change)  # type: ignore[misc]

    def delete_model(self, request: HttpRequest, obj: Model) -> None:
        with audit.action(request.user, "admin delete", described(obj)):
            super().delete_model(request, obj)  # type: ignore[misc]

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        target = "; ".join(described(obj) for obj in queryset)
        with audit.action(request.user, "admin delete", target):
            super().delete_queryset(request, queryset)  # type: ignore[misc]


class AuditedAdminSite(admin.AdminSite):
    def register(
        self,
        model_or_iterable: Any,
        admin_class: type[admin.ModelAdmin] | None = None,
        **options: Any,
    ) -> None:
        base = admin_class or admin.ModelAdmin
        audited = type(base.__name__, (AuditedModelAdmin, base), {"__module__": base.__module__})
        super().register(model_or_iterable, audited, **options)

    def login(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        """One login page, whose rules (KMQ_LOCAL_LOGIN, single sign-on)
        hold here too: the admin's own form would take any staff password."""
        return redirect_to_login(request.GET.get("next") or reverse("admin:index"))

    def admin_view(self, view: Callable, cacheable: bool = False) -> Callable:
        """Each admin view runs with its user as the actor, so the role and
        token changes it makes are audited as theirs (audit_receivers.py)."""
        checked = super().admin_view(view, cacheable)

        @wraps(checked)
        def acting(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            with audit.acting(request.user):
                return checked(request, *args, **kwargs)

        return acting
