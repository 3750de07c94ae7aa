from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class ConsoleConfig(AppConfig):
    name = "kmqadmin.console"
    label = "console"
    verbose_name = "kmqadmin console"

    def ready(self) -> None:
        # The Celery app, so tasks sent from any Django process go through
        # its broker settings; and the signal receivers.
        from kmqadmin import celery  # noqa: F401
        from kmqadmin.console import audit_receivers, signals  # noqa: F401


class AuditedAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with the audited site (admin_site.py) as admin.site;
    named in INSTALLED_APPS, never this module's default."""

    default = False

    default_site = "kmqadmin.console.admin_site.AuditedAdminSite"
