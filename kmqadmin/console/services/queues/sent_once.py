"""Idempotency-Key: a send retried with the same key writes nothing twice.

A client that got no answer (a timeout, a 504 "outcome unknown") cannot know
whether its message was written; retrying blind may write it twice. With an
``Idempotency-Key`` header (the IETF httpapi draft's), the first send claims
the key, and a retry within KEPT_FOR gets the first send's record back (same
partition and offset) instead of a new one: while the first has no outcome
yet, 409 and try again later; when it failed, the retry sends anew. The same
key with a different message is refused (422): that is a client bug, not a
retry.
"""

import hashlib
from collections.abc import Callable
from datetime import timedelta

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from kmqadmin.console.models import AuditEntry, Queue, SentOnce
from kmqadmin.console.services.queues import messages
from kmqadmin.kafka.client.checked_producer import OutcomeUnknown
from kmqadmin.kmq import headers as h
from kmqadmin.kmq.draft import Draft

KEPT_FOR = timedelta(hours=24)
KEY_MAX = 255


class BadKey(ValueError):
    """Not a key we keep (400)."""


class KeyReused(Exception):
    """The key's first send was another message (422)."""


class FirstStillOpen(Exception):
    """The key's first send has no outcome yet (409, try again later)."""


def enqueue(
    user: AbstractBaseUser, queue: Queue, draft: Draft, key: str
) -> tuple[messages.Written, bool]:
    """``messages.enqueue`` at most once per ``key``; (where it went, whether
    this answer is the first send's, replayed)."""
    if not 0 < len(key) <= KEY_MAX or not key.isprintable():
        raise BadKey(f"must be 1 to {KEY_MAX} printable characters")
    print_ = _fingerprint(draft)
    SentOnce.objects.filter(at__lt=timezone.now() - KEPT_FOR).delete()
    try:
        with transaction.atomic():
            claim = SentOnce.objects.create(user=user, queue=queue, key=key, fingerprint=print_)
    except IntegrityError:
        try:
            first = SentOnce.objects.select_related("entry").get(user=user, queue=queue, key=key)
        except SentOnce.DoesNotExist:  # its send failed and let the key go just now
            return enqueue(user, queue, draft, key)
        if first.fingerprint != print_:
            raise KeyReused("this Idempotency-Key was used for another message") from None
        if (done := _written(queue, first.entry)) is not None:
            return done, True
        if first.entry is None or first.entry.status != AuditEntry.Status.FAILED:
            raise FirstStillOpen(
                "the first send with this Idempotency-Key has no outcome yet; try again later"
            ) from None
        first.delete()  # it failed: this retry sends anew
        return enqueue(user, queue, draft, key)
    try:
        written = messages.enqueue(user, queue, draft, on_entry=_linker(claim))
    except OutcomeUnknown:
        raise  # the claim stays: a retry waits for the outcome
    except Exception:
        claim.delete()  # nothing was written: a retry may send
        raise
    return written, False


def _linker(claim: SentOnce) -> Callable[[AuditEntry], None]:
    def link(entry: AuditEntry) -> None:
        SentOnce.objects.filter(pk=claim.pk).update(entry=entry)

    return link


def _written(queue: Queue, entry: AuditEntry | None) -> messages.Written | None:
    if entry is None or entry.status != AuditEntry.Status.DONE:
        return None
    partition, offset = entry.after["partition"], entry.after["offset"]
    return messages.Written(h.message_id(queue.topic, partition, offset), partition, offset)


def _fingerprint(draft: Draft) -> str:
    digest = hashlib.sha256(repr((draft.value, draft.key, draft.headers, draft.partition)).encode())
    return digest.hexdigest()
