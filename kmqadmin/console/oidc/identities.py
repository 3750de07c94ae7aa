"""Who a provider's claims are here: the user linked to their issuer and
subject, made at the first sign-in, with the role their groups give now.

The browser's sign-in (backend.py) and the API's bearer tokens (bearer.py)
both come through signed_in, so a group removed at the provider is a role
removed here at that person's next sign-in or bearer call (a browser session
signs in again KMQ_OIDC_SESSION_S after it began: views.py). Role changes
are audited as every role change is (audit_receivers.roles_changed)."""

from collections.abc import Mapping
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction

from kmqadmin.console.models import SsoIdentity
from kmqadmin.console.oidc.provider import Provider
from kmqadmin.console.services.audit import trail as audit
from kmqadmin.console.services.roles import GROUPS


class Refused(Exception):
    """Signed in at the provider, but not let in here; the message says why
    to the person, and what to ask for."""


def role_of_claims(provider: Provider, claims: Mapping[str, Any]) -> str | None:
    """The highest role the claims' groups give, None for none."""
    groups = claims.get(provider.groups_claim)
    if isinstance(groups, str):
        groups = [groups]
    if not isinstance(groups, list):
        return None
    mapped = provider.role_groups
    roles = {mapped[g] for g in groups if isinstance(g, str) and g in mapped}
    return max(roles, key=GROUPS.__getitem__, default=None)


def signed_in(provider: Provider, claims: Mapping[str, Any]) -> AbstractBaseUser:
    """The user the claims are, their role set from the claims' groups; Refused
    when the groups give no role (any role they held is removed first), when
    the claims would take over a local account, or when the user is inactive."""
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject:
        raise Refused(f"{provider.name} did not say who you are (no sub claim).")
    role = role_of_claims(provider, claims)
    try:
        user = _linked(provider, claims, subject, role)
    except IntegrityError:  # a first sign-in in two requests at once: the other made the user
        user = _linked(provider, claims, subject, role)
    if role is None:
        raise Refused(_no_role(provider, claims))
    if not user.is_active:
        raise Refused(f"Your account {user.get_username()} is deactivated here: ask an admin.")
    return user


def _linked(
    provider: Provider, claims: Mapping[str, Any], subject: str, role: str | None
) -> AbstractBaseUser:
    with transaction.atomic():
        identity = (
            SsoIdentity.objects.select_related("user")
            .filter(issuer=provider.issuer, subject=subject)
            .first()
        )
        if identity is None and role is None:
            raise Refused(_no_role(provider, claims))
        user = identity.user if identity else _new_user(provider, claims, subject)
        _copy_profile(user, claims)
        _set_role(user, role)
    return user


def _set_role(user: AbstractBaseUser, role: str | None) -> None:
    """Exactly ``role``'s group among the role groups; other groups untouched."""
    held = set(user.groups.filter(name__in=GROUPS).values_list("name", flat=True))
    wanted = {role} if role else set()
    if held - wanted:
        user.groups.remove(*Group.objects.filter(name__in=held - wanted))
    if wanted - held:
        user.groups.add(*Group.objects.filter(name__in=wanted - held))


def _new_user(provider: Provider, claims: Mapping[str, Any], subject: str) -> AbstractBaseUser:
    username = str(claims.get("preferred_username") or subject)[:150]
    users = get_user_model()
    if users.objects.filter(username=username).exists():
        raise Refused(
            f"An account named {username} already exists here and was not made by "
            f"{provider.name}. An admin can rename it, then you can sign in."
        )
    user = users.objects.create_user(username)  # no password: it signs in at the provider
    SsoIdentity.objects.create(user=user, issuer=provider.issuer, subject=subject)
    audit.record(
        None, "sso user created", username, after={"issuer": provider.issuer, "subject": subject}
    )
    return user


def _copy_profile(user: AbstractBaseUser, claims: Mapping[str, Any]) -> None:
    fields = {"email": "email", "first_name": "given_name", "last_name": "family_name"}
    changed = [
        field
        for field, claim in fields.items()
        if isinstance(claims.get(claim), str) and getattr(user, field) != claims[claim]
    ]
    for field in changed:
        setattr(user, field, claims[fields[field]][:150])
    if changed:
        user.save(update_fields=changed)


def _no_role(provider: Provider, claims: Mapping[str, Any]) -> str:
    who = claims.get("preferred_username") or claims.get("sub")
    groups = ", ".join(sorted(provider.role_groups)) or "(none configured)"
    return (
        f"You signed in at {provider.name} as {who}, but you are in none of the groups "
        f"that give a role here ({groups}). Ask whoever runs {provider.name} to add you "
        "to one."
    )
