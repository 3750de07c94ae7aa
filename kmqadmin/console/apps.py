from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "kmqadmin.console"
    label = "console"
    verbose_name = "kmqadmin console"

    def ready(self) -> None:
        from . import signals  # noqa: F401  (connects the receivers)
