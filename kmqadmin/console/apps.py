from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "kmqadmin.console"
    label = "console"
    verbose_name = "kmqadmin console"

    def ready(self) -> None:
        # The Celery app, so tasks sent from any Django process go through
        # its broker settings; and the signal receivers.
        from kmqadmin import celery  # noqa: F401

        from . import signals  # noqa: F401
