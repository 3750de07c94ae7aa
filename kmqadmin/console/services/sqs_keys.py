"""The SQS endpoint's access keys: made, revoked, and their secrets read back.

An SQS client signs each request with its secret (SigV4), so the endpoint
needs the secret itself, not a hash of it: it is stored encrypted
(secrets_at_rest.py) and decrypted only to verify a signature. It is shown once, when made.
Key ids look like AWS's (20 characters, ``AKIA`` first); secrets are 40
letters and digits, so an ``sqs://KEY:SECRET@host`` broker URL (kombu)
needs no quoting. Making and revoking are audited with the key id.
"""

import re
import secrets
import string
from dataclasses import dataclass

from django.contrib.auth.base_user import AbstractBaseUser
from django.utils import timezone

from kmqadmin.console.models import SqsAccessKey
from kmqadmin.console.services import secrets_at_rest
from kmqadmin.console.services.audit import trail as audit

KEY_ID_PREFIX = "AKIA"
KEY_ID_ALPHABET = string.ascii_uppercase + "234567"
SECRET_ALPHABET = string.ascii_letters + string.digits
SECRET_LENGTH = 40
# What an imported pair may be: AWS's ids are 16 to 128 letters and digits,
# moto's and LocalStack's test ids shorter; a secret is printable, unspaced.
GIVEN_ID = re.compile(r"[A-Za-z0-9]{1,128}")
GIVEN_SECRET = re.compile(r"[!-~]{1,128}")


def create(
    user: AbstractBaseUser,
    by: AbstractBaseUser | None = None,
    given: tuple[str, str] | None = None,
) -> tuple[str, str]:
    """A new key of ``user``'s: its id and secret (the only time the secret
    is given out). ``by``: who made it, when not the user. ``given``: a
    pair the user's services already sign with (moving from SQS, they keep
    their credentials); ValueError says what is wrong with it."""
    key_id, secret = given or _new()
    if given is not None:
        _check(key_id, secret)
    SqsAccessKey.objects.create(key_id=key_id, user=user, secret=secrets_at_rest.encrypt(secret))
    after = {"user": user.get_username(), **({"imported": True} if given else {})}
    audit.record(by or user, "sqs-key.create", f"sqs-key:{key_id}", after=after)
    return key_id, secret


def _new() -> tuple[str, str]:
    key_id = KEY_ID_PREFIX + "".join(secrets.choice(KEY_ID_ALPHABET) for _ in range(16))
    return key_id, "".join(secrets.choice(SECRET_ALPHABET) for _ in range(SECRET_LENGTH))


def _check(key_id: str, secret: str) -> None:
    if not GIVEN_ID.fullmatch(key_id):
        raise ValueError("an access key id is 1 to 128 letters and digits")
    if not GIVEN_SECRET.fullmatch(secret):
        raise ValueError("a secret is 1 to 128 printable characters without spaces")
    if SqsAccessKey.objects.filter(key_id=key_id).exists():
        raise ValueError(f"access key {key_id} exists already (revoked keys stay taken)")


def revoke(key_id: str, by: AbstractBaseUser | None = None) -> None:
    """Requests signed with it are refused from now on. LookupError for a
    key that does not exist or is revoked already."""
    key = SqsAccessKey.objects.filter(key_id=key_id, revoked_at__isnull=True).first()
    if key is None:
        raise LookupError(f"no active SQS access key {key_id!r}")
    key.revoked_at = timezone.now()
    key.save(update_fields=["revoked_at"])
    audit.record(
        by, "sqs-key.revoke", f"sqs-key:{key_id}", before={"user": key.user.get_username()}
    )


@dataclass(frozen=True, slots=True)
class ActiveKey:
    secret: str
    user: AbstractBaseUser


def active(key_id: str) -> ActiveKey | None:
    """An active key's secret and user, in one query (the SQS endpoint asks
    on every request); None for one unknown or revoked (or encrypted with a
    key no longer configured)."""
    key = (
        SqsAccessKey.objects.select_related("user")
        .filter(key_id=key_id, revoked_at__isnull=True)
        .first()
    )
    secret = None if key is None else secrets_at_rest.decrypt(key.secret)
    return None if secret is None else ActiveKey(secret, key.user)
