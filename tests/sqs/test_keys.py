"""Access keys of the SQS endpoint through `manage.py kmq sqs-key`: made for
a user and printed once as two lines, kept encrypted, refused once revoked,
each change audited with the key id; bad input named."""

import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from kmqadmin.console.models import AuditEntry, SqsAccessKey
from kmqadmin.console.services import sqs_keys

CREATED = re.compile(
    r"AWS_ACCESS_KEY_ID=(AKIA[A-Z2-7]{16})\nAWS_SECRET_ACCESS_KEY=([A-Za-z0-9]{40})\n"
)


def kmq(*args: str) -> str:
    out = io.StringIO()
    call_command("kmq", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.mark.django_db
def test_a_key_is_printed_once_as_two_lines_and_kept_encrypted() -> None:
    get_user_model().objects.create_user("ops")
    printed = CREATED.fullmatch(kmq("sqs-key", "create", "ops"))
    assert printed is not None
    key_id, secret = printed.groups()
    assert sqs_keys.active(key_id).secret == secret
    stored = SqsAccessKey.objects.get(key_id=key_id)
    assert stored.user.username == "ops"
    assert secret.encode() not in bytes(stored.secret)
    entry = AuditEntry.objects.get(action="sqs-key.create")
    assert (entry.target, entry.after) == (f"sqs-key:{key_id}", {"user": "ops"})
    assert secret not in str(entry.after)


@pytest.mark.django_db
def test_a_pair_services_already_use_is_imported_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    get_user_model().objects.create_user("ops")
    with pytest.raises(CommandError, match="set AWS_ACCESS_KEY_ID"):
        kmq("sqs-key", "import", "ops")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXISTING0001")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalr/XUtnFEMI+K7MDENG")
    assert kmq("sqs-key", "import", "ops") == ""  # the secret is never printed
    assert sqs_keys.active("AKIAEXISTING0001").secret == "wJalr/XUtnFEMI+K7MDENG"
    entry = AuditEntry.objects.get(action="sqs-key.create")
    assert entry.after == {"user": "ops", "imported": True}
    with pytest.raises(CommandError, match="exists already"):
        kmq("sqs-key", "import", "ops")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIA/NOT-AN-ID")
    with pytest.raises(CommandError, match="1 to 128 letters and digits"):
        kmq("sqs-key", "import", "ops")


@pytest.mark.django_db
def test_a_revoked_key_has_no_secret_any_more() -> None:
    get_user_model().objects.create_user("ops")
    key_id, _ = CREATED.fullmatch(kmq("sqs-key", "create", "ops")).groups()
    kmq("sqs-key", "revoke", key_id)
    assert sqs_keys.active(key_id) is None
    assert AuditEntry.objects.filter(action="sqs-key.revoke", target=f"sqs-key:{key_id}").exists()
    with pytest.raises(CommandError, match="no active SQS access key"):
        kmq("sqs-key", "revoke", key_id)


@pytest.mark.django_db
def test_an_unknown_user_or_key_is_named() -> None:
    with pytest.raises(CommandError, match="no user 'nobody'"):
        kmq("sqs-key", "create", "nobody")
    assert sqs_keys.active("AKIANOSUCHKEY0000000") is None


@pytest.mark.django_db
def test_a_secret_under_a_retired_encryption_key_is_unreadable_and_rotation_keeps_old_ones(
    settings,
) -> None:
    get_user_model().objects.create_user("ops")
    key_id, secret = sqs_keys.create(get_user_model().objects.get(username="ops"))
    old = settings.KMQ_SQS_ENCRYPTION_KEY
    new = "Qm9ndXNCb2d1c0JvZ3VzQm9ndXNCb2d1c0JvZ3VzMDA="
    settings.KMQ_SQS_ENCRYPTION_KEY = f"{new},{old}"  # rotated: the old one still reads
    assert sqs_keys.active(key_id).secret == secret
    settings.KMQ_SQS_ENCRYPTION_KEY = new  # retired: refused, not an error
    assert sqs_keys.active(key_id) is None
