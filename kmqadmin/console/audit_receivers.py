"""Audited changes Django makes without going through a service: logins and
failed logins, role (group) changes and API token creation and deletion,
from /admin/, a management command or a shell alike.

Each is recorded inside the transaction of the change it records (Django
sends these signals within it), so neither lands without the other. The
actor of a role or token change is the admin acting in the request
(admin_site.py), or none outside one.
"""

from typing import Any

from django.contrib.auth import get_user_model, user_logged_in, user_login_failed
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import Group
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.dispatch import receiver
from django.http import HttpRequest
from rest_framework.authtoken.models import Token, TokenProxy

from kmqadmin.console.services.audit import trail as audit

User = get_user_model()


@receiver(user_logged_in)
def logged_in(sender: type, request: HttpRequest, user: AbstractBaseUser, **kwargs: Any) -> None:
    after = _client(request)
    if getattr(user, "backend", "").endswith(".SsoBackend"):
        after = {**(after or {}), "via": "single sign-on"}
    audit.record(user, "login", user.get_username(), after=after)


@receiver(user_login_failed)
def login_failed(
    sender: str, credentials: dict, request: HttpRequest | None = None, **kwargs: Any
) -> None:
    """The username tried, never the password (Django masks it anyway)."""
    tried = str(credentials.get(User.USERNAME_FIELD, ""))
    audit.record(None, "login", tried, after=_client(request), error="invalid credentials")


def _client(request: HttpRequest | None) -> dict | None:
    return None if request is None else {"ip": request.META.get("REMOTE_ADDR")}


@receiver(m2m_changed, sender=User.groups.through)
def roles_changed(
    sender: type,
    instance: AbstractBaseUser | Group,
    action: str,
    reverse: bool,
    pk_set: set[int] | None,
    **kwargs: Any,
) -> None:
    """A user's groups are their roles (services/roles.py). ``reverse``: the
    change was made from the group's side (group.user_set)."""
    if action == "pre_clear":  # the last moment the cleared rows are known
        users, groups = _cleared(instance, reverse)
        change = "removed"
    elif action in ("post_add", "post_remove"):
        users, groups = _changed(instance, reverse, pk_set or set())
        change = "added" if action == "post_add" else "removed"
    else:
        return
    names = sorted(g.name for g in groups)
    for user in users:
        audit.record(audit.actor(), "role change", user.get_username(), after={change: names})


def _changed(instance: AbstractBaseUser | Group, reverse: bool, pks: set[int]) -> tuple[list, list]:
    if reverse:
        return list(User.objects.filter(pk__in=pks)), [instance]
    return [instance], list(Group.objects.filter(pk__in=pks))


def _cleared(instance: AbstractBaseUser | Group, reverse: bool) -> tuple[list, list]:
    if reverse:
        return list(instance.user_set.all()), [instance]
    return [instance], list(instance.groups.all())


@receiver(post_save, sender=Token)
@receiver(post_save, sender=TokenProxy)  # what /admin/ saves
def token_saved(sender: type, instance: Token, created: bool, **kwargs: Any) -> None:
    if created:
        audit.record(audit.actor(), "create API token", audit.token_target(instance))


@receiver(post_delete, sender=Token)  # TokenProxy deletes through Token
def token_deleted(sender: type, instance: Token, **kwargs: Any) -> None:
    audit.record(audit.actor(), "delete API token", audit.token_target(instance))
