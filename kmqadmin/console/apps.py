from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "kmqadmin.console"
    label = "console"
    verbose_name = "kmqadmin console"
