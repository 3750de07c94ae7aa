"""`kmq sqs-key create <username>` / `kmq sqs-key revoke <key id>`.

``create`` prints exactly two lines, ``AWS_ACCESS_KEY_ID=...`` and
``AWS_SECRET_ACCESS_KEY=...``, so its output can be sourced or pasted into
a service's environment; the secret is not shown again.
"""

from argparse import ArgumentParser
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from kmqadmin.console.services import sqs_keys


def add_arguments(parser: ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="sqs_key_action", required=True, metavar="action")
    create = actions.add_parser("create", help="A new access key of a user's; prints it once.")
    create.add_argument("username")
    revoke = actions.add_parser("revoke", help="Refuse requests signed with this key from now on.")
    revoke.add_argument("key_id")


def handle(command: BaseCommand, options: dict[str, Any]) -> None:
    if options["sqs_key_action"] == "create":
        username = options["username"]
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user {username!r}: create it first (manage.py createsuperuser)")
        key_id, secret = sqs_keys.create(user)
        command.stdout.write(f"AWS_ACCESS_KEY_ID={key_id}\nAWS_SECRET_ACCESS_KEY={secret}")
        return
    try:
        sqs_keys.revoke(options["key_id"])
    except LookupError as exc:
        raise CommandError(str(exc)) from exc
    command.stderr.write(f"revoked {options['key_id']}")
