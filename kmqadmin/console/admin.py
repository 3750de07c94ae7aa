from django.contrib import admin

from .forms import ClusterForm
from .models import Cluster, Queue


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    form = ClusterForm
    list_display = ["name", "bootstrap_servers"]


@admin.register(Queue)
class QueueAdmin(admin.ModelAdmin):
    list_display = ["topic", "cluster", "group_id", "message_timeout_ms", "max_redeliveries"]
    list_filter = ["cluster"]
