"""The audit trail: every action a person or a service takes through kmqadmin.

An action with an effect outside this database (Kafka) is written in two
steps: its intent before the effect, its outcome after (``action``). If the
intent cannot be written the effect is not attempted, and an effect that
fails leaves a ``failed`` entry with the error; one Kafka did not report on
in time, an ``unknown`` one, finished when the report comes. A change the database makes
in the same transaction as its entry (admin edits, roles, tokens, logins)
is one entry with its outcome (``record``).
"""

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from datetime import timedelta
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.utils import timezone
from rest_framework.authtoken.models import Token

from kmqadmin.console.models import AuditEntry
from kmqadmin.console.models.audit import AppendOnly
from kmqadmin.kafka.client.checked_producer import OutcomeUnknown

Status = AuditEntry.Status

# Who is acting in this request, for receivers of model signals (role and
# token changes), which Django calls without the request.
_actor: ContextVar[AbstractBaseUser | None] = ContextVar("audit_actor", default=None)


@contextmanager
def action(
    user: AbstractBaseUser | None,
    action: str,
    target: str,
    before: Any = None,
    after: Any = None,
) -> Iterator[AuditEntry]:
    """Writes the entry ``pending``, runs the block (the effect), then marks
    it ``done``, or ``failed`` with the error, which goes on up. ``before``
    / ``after``: the target around the action as JSON-able values; the block
    may set ``entry.after`` to what the effect reported. ``user`` is None
    for a job whose requester has since been deleted."""
    entry = AuditEntry.objects.create(
        user=user,
        action=action,
        target=target,
        before=before,
        after=after,
        status=Status.PENDING,
    )
    try:
        yield entry
    except OutcomeUnknown as exc:
        # The late report may have come first (another request polled the producer).
        with suppress(AppendOnly):
            entry.finish(Status.UNKNOWN, after=entry.after, error=str(exc))
        raise
    except Exception as exc:
        entry.finish(Status.FAILED, after=entry.after, error=f"{type(exc).__name__}: {exc}")
        raise
    entry.finish(Status.DONE, after=entry.after)


def record(
    user: AbstractBaseUser | None,
    action: str,
    target: str,
    before: Any = None,
    after: Any = None,
    *,
    error: str = "",
) -> AuditEntry:
    """An action already taken: ``done``, or ``failed`` with ``error``."""
    return AuditEntry.objects.create(
        user=user,
        action=action,
        target=target,
        before=before,
        after=after,
        status=Status.FAILED if error else Status.DONE,
        error=error,
    )


def done_within(action: str, target: str, within: timedelta) -> bool:
    """Whether ``action`` on ``target`` was done in the last ``within``: the
    SQS endpoint's once-a-minute rules (DeleteQueue, PurgeQueue) read it."""
    return AuditEntry.objects.filter(
        action=action, target=target, status=Status.DONE, at__gte=timezone.now() - within
    ).exists()


@contextmanager
def acting(user: AbstractBaseUser | None) -> Iterator[None]:
    """``user`` is the actor of what the block changes (see ``actor``)."""
    token = _actor.set(user)
    try:
        yield
    finally:
        _actor.reset(token)


def actor() -> AbstractBaseUser | None:
    """The user acting in this request; None outside one (a command, a shell)."""
    return _actor.get()


def token_target(token: Token) -> str:
    """An API token as its audit target: whose it is, never its key."""
    return f"API token of {token.user.get_username()}"
