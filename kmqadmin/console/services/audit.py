"""The audit trail: every action a person or a service takes through kmqadmin."""

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser

from ..models import AuditEntry


def record(
    user: AbstractBaseUser | None,
    action: str,
    target: str,
    before: Any = None,
    after: Any = None,
) -> AuditEntry:
    """``before`` / ``after``: what the target looked like around the action,
    as JSON-able values (None where there is nothing to show). ``user`` is
    None for a job whose requester has since been deleted."""
    return AuditEntry.objects.create(
        user=user, action=action, target=target, before=before, after=after
    )
