from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from kmqadmin.console.forms.registry import ClusterForm, QueueForm
from kmqadmin.console.models import AuditEntry, Cluster, Queue


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    form = ClusterForm
    list_display = ["name", "bootstrap_servers"]


@admin.register(Queue)
class QueueAdmin(admin.ModelAdmin):
    """The registry's form: a backend switch is refused here too while
    messages are in flight."""

    form = QueueForm
    list_display = [
        "topic",
        "cluster",
        "group_id",
        "backend",
        "marker_format",
        "message_timeout_ms",
        "max_redeliveries",
    ]
    list_filter = ["cluster", "backend"]

    def get_form(self, request: HttpRequest, obj: Queue | None = None, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, **kwargs)
        return type(form.__name__, (form,), {"user": request.user})


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    """Read-only: the audit log is append-only (the model refuses changes too)."""

    list_display = ["at", "username", "action", "target", "status"]
    list_filter = ["status", "action"]
    search_fields = ["username", "target"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: AuditEntry | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: AuditEntry | None = None) -> bool:
        return False
