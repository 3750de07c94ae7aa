"""`kmq sqs-key create <username>` / `kmq sqs-key import <username>` /
`kmq sqs-key revoke <key id>`.

``create`` prints exactly two lines, ``AWS_ACCESS_KEY_ID=...`` and
``AWS_SECRET_ACCESS_KEY=...``, so its output can be sourced or pasted into
a service's environment; the secret is not shown again. ``import`` takes
the pair services already sign with from those two environment variables
(never from the command line, which other users of the machine can read).
"""

import os
from argparse import ArgumentParser
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from kmqadmin.console.services import sqs_keys


def add_arguments(parser: ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="sqs_key_action", required=True, metavar="action")
    create = actions.add_parser("create", help="A new access key of a user's; prints it once.")
    create.add_argument("username")
    given = actions.add_parser(
        "import",
        help="Take the key pair in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY as a user's.",
    )
    given.add_argument("username")
    revoke = actions.add_parser("revoke", help="Refuse requests signed with this key from now on.")
    revoke.add_argument("key_id")


def handle(command: BaseCommand, options: dict[str, Any]) -> None:
    if options["sqs_key_action"] == "create":
        key_id, secret = sqs_keys.create(_user(options["username"]))
        command.stdout.write(f"AWS_ACCESS_KEY_ID={key_id}\nAWS_SECRET_ACCESS_KEY={secret}")
        return
    if options["sqs_key_action"] == "import":
        user, pair = (
            _user(options["username"]),
            (_env("AWS_ACCESS_KEY_ID"), _env("AWS_SECRET_ACCESS_KEY")),
        )
        try:
            key_id, _ = sqs_keys.create(user, given=pair)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        command.stderr.write(f"imported {key_id} for {user.get_username()}")
        return
    try:
        sqs_keys.revoke(options["key_id"])
    except LookupError as exc:
        raise CommandError(str(exc)) from exc
    command.stderr.write(f"revoked {options['key_id']}")


def _user(username: str) -> Any:
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"no user {username!r}: create it first (manage.py createsuperuser)")
    return user


def _env(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        raise CommandError(
            f"set {name}: import takes the pair from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
        )
    return value
