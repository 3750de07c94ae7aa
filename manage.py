#!/usr/bin/env python
"""Django's command-line utility, with one-line errors for setup mistakes."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kmqadmin.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line
    from django.db.utils import OperationalError

    from kmqadmin.kafka.client.errors import KafkaSetupError

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # EX_CONFIG: a supervisor (`kmq run`) does not restart what would fail the same way.
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(78)
    except KafkaSetupError as exc:
        sys.exit(f"error: {exc}")
    except OperationalError as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        sys.exit(f"error: the database is unreachable ({detail}); check DATABASE_URL")


if __name__ == "__main__":
    main()
