"""Subcommands of `python manage.py kmq`, one module each.

Each module exposes ``add_arguments(parser)`` and ``handle(command, options)``.
"""
