from django.urls import path, re_path

from kmqadmin.console.views import (
    alerts,
    audit,
    dashboard,
    dead_letters,
    groups,
    health,
    metrics,
    queues,
    registry,
    schedules,
    tasks,
)
from kmqadmin.console.views.records import browser, produce, search
from kmqadmin.kmq import names

app_name = "console"

TOPIC = rf"(?P<topic>{names.TOPIC_NAME})"
# Ids come from producers: any character, a newline included, must resolve.
ANY = r"[\s\S]+"
CLUSTER = r"(?P<cluster>[-a-zA-Z0-9_]+)"
GROUP = rf"^clusters/{CLUSTER}/groups/(?P<kind>consumer|share)/(?P<group_id>{ANY})"

urlpatterns = [
    path("", dashboard.index, name="index"),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.scrape, name="metrics"),
    path("audit/", audit.log, name="audit"),
    path("alerts/", alerts.index, name="alerts"),
    path("alerts/history/", alerts.history, name="alert-history"),
    path("alerts/new", alerts.edit, name="new-alert"),
    path("alerts/<int:pk>/edit", alerts.edit, name="edit-alert"),
    path("alerts/<int:pk>/delete", alerts.delete, name="delete-alert"),
    path("alerts/<int:pk>/silence", alerts.silence, name="silence-alert"),
    path("alerts/defaults/<int:queue_pk>", alerts.defaults, name="alert-defaults"),
    path("search/", search.search, name="search"),
    path("tasks/<str:task_id>", tasks.progress, name="task"),
    path("registry/", registry.index, name="registry"),
    path("registry/<str:kind>/new", registry.register, name="register"),
    path("registry/<str:kind>/<int:pk>", registry.register, name="edit-registered"),
    path("groups/", groups.clusters, name="group-clusters"),
    path("clusters/<slug:cluster>/groups/", groups.index, name="groups"),
    # A group id may hold any character: the detail ends in "/", the reset in "/reset".
    re_path(rf"{GROUP}/reset$", groups.reset, name="group-reset"),
    re_path(rf"{GROUP}/$", groups.detail, name="group"),
    re_path(rf"^queues/{TOPIC}/$", queues.detail, name="queue"),
    re_path(rf"^queues/{TOPIC}/replay$", queues.replay, name="replay"),
    re_path(rf"^queues/{TOPIC}/purge$", queues.purge, name="purge"),
    re_path(
        rf"^queues/{TOPIC}/share-group/reset$",
        queues.reset_share_group,
        name="reset-share-group",
    ),
    re_path(rf"^queues/{TOPIC}/topics$", queues.create_topics, name="create-topics"),
    re_path(rf"^queues/{TOPIC}/produce$", produce.produce, name="produce"),
    re_path(rf"^queues/{TOPIC}/act/(?P<action>[a-z]+)$", queues.act, name="act"),
    # A kmq-id holds slashes: topic/partition/offset.
    re_path(rf"^queues/{TOPIC}/messages/(?P<message_id>{ANY})$", queues.message, name="message"),
    re_path(rf"^queues/{TOPIC}/dlq/$", dead_letters.browse, name="dlq"),
    re_path(rf"^queues/{TOPIC}/dlq/redrive$", dead_letters.bulk_redrive, name="bulk-redrive"),
    path(
        "queues/<str:topic>/dlq/<int:partition>/<int:offset>/redrive",
        dead_letters.redrive,
        name="redrive",
    ),
    path(
        "queues/<str:topic>/dlq/<int:partition>/<int:offset>/edit",
        produce.redrive_with_edits,
        name="redrive-with-edits",
    ),
    path(
        "queues/<str:topic>/dlq/<int:partition>/<int:offset>/headers",
        dead_letters.letter_headers,
        name="letter-headers",
    ),
    path("schedules/", schedules.index, name="schedule-topics"),
    re_path(rf"^schedules/{TOPIC}/$", schedules.upcoming, name="schedules"),
    re_path(rf"^schedules/{TOPIC}/new$", schedules.edit, name="new-schedule"),
    re_path(
        rf"^schedules/{TOPIC}/(?P<schedule_id>{ANY})/edit$", schedules.edit, name="edit-schedule"
    ),
    re_path(
        rf"^schedules/{TOPIC}/(?P<schedule_id>{ANY})/(?P<action>cancel|fire)$",
        schedules.act,
        name="schedule-action",
    ),
    path("clusters/", browser.clusters, name="clusters"),
    path("clusters/<slug:cluster>/topics/", browser.topics, name="topics"),
    re_path(rf"^clusters/{CLUSTER}/topics/{TOPIC}/browse$", browser.browse, name="browse"),
    re_path(
        rf"^clusters/{CLUSTER}/topics/{TOPIC}/(?P<partition>[0-9]{{1,19}})/(?P<offset>[0-9]{{1,19}})$",
        browser.message,
        name="browsed-message",
    ),
]
