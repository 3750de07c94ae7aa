from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from kmqadmin.api.views import (
    alerts,
    audit,
    dead_letters,
    groups,
    queues,
    schedules,
    share_groups,
    tail,
    tasks,
    topics,
)
from kmqadmin.console.models import Queue, ScheduleTopic
from kmqadmin.kmq import names

app_name = "api"

TOPIC = rf"(?P<topic>{names.TOPIC_NAME})"
# Ids come from producers: any character, a newline included, must resolve.
ANY = r"[\s\S]+"
CLUSTER_TOPIC = rf"^clusters/(?P<cluster>[-\w]+)/topics/{TOPIC}"
GROUP = rf"^clusters/(?P<cluster>[-\w]+)/groups/(?P<kind>consumer|share)/(?P<group_id>{ANY})"

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves its script as a file, as the CSP (no inline scripts) needs.
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api:schema"), name="docs"),
    path("queues/", queues.QueueList.as_view(), name="queues"),
    re_path(rf"^queues/{TOPIC}/$", queues.QueueDetail.as_view(), name="queue"),
    re_path(rf"^queues/{TOPIC}/messages/$", queues.Enqueue.as_view(), name="enqueue"),
    re_path(rf"^queues/{TOPIC}/stats$", queues.QueueStatsView.as_view(), name="stats"),
    re_path(rf"^queues/{TOPIC}/in-flight/$", queues.InFlightList.as_view(), name="in-flight"),
    # A kmq-id holds slashes (topic/partition/offset): the action is the last segment.
    re_path(
        rf"^queues/{TOPIC}/messages/(?P<message_id>{ANY})/(?P<action>ack|retry|extend|reject)$",
        queues.MessageAction.as_view(),
        name="message-action",
    ),
    re_path(
        rf"^queues/{TOPIC}/share-group$", share_groups.ShareGroupView.as_view(), name="share-group"
    ),
    re_path(rf"^queues/{TOPIC}/share-group/reset$", share_groups.ShareGroupReset.as_view()),
    re_path(rf"^queues/{TOPIC}/dlq/$", dead_letters.LetterList.as_view(), name="dlq"),
    re_path(rf"^queues/{TOPIC}/dlq/redrive$", dead_letters.BulkRedrive.as_view()),
    path("tasks/<str:task_id>", tasks.TaskStatus.as_view(), name="task"),
    path("audit/", audit.AuditLog.as_view(), name="audit"),
    path("alerts/", alerts.AlertRuleList.as_view(), name="alerts"),
    path("alerts/history/", alerts.AlertHistory.as_view(), name="alert-history"),
    path("alerts/<int:pk>", alerts.AlertRuleDetail.as_view(), name="alert"),
    path("alerts/<int:pk>/silence", alerts.Silence.as_view(), name="alert-silence"),
    re_path(rf"^queues/{TOPIC}/alerts/$", alerts.TargetRules.as_view(model=Queue)),
    re_path(rf"^queues/{TOPIC}/alerts/defaults$", alerts.QueueDefaultRules.as_view()),
    re_path(rf"^schedules/{TOPIC}/alerts/$", alerts.TargetRules.as_view(model=ScheduleTopic)),
    path("clusters/<slug:cluster>/groups/", groups.GroupList.as_view(), name="groups"),
    path("clusters/<slug:cluster>/topics/", topics.TopicList.as_view(), name="topics"),
    re_path(
        rf"{CLUSTER_TOPIC}/records/$",
        topics.RecordPage.as_view(),
        name="records",
    ),
    re_path(rf"{CLUSTER_TOPIC}/tail$", tail.TopicTail.as_view(), name="tail"),
    re_path(
        rf"{CLUSTER_TOPIC}/records/(?P<partition>[0-9]+)/(?P<offset>[0-9]+)$",
        topics.RecordDetail.as_view(),
        name="record",
    ),
    # A group id may hold any character: the detail ends in "/", the reset in "/reset".
    re_path(rf"{GROUP}/reset$", groups.GroupReset.as_view(), name="group-reset"),
    re_path(rf"{GROUP}/$", groups.GroupDetail.as_view(), name="group"),
    re_path(
        rf"^queues/{TOPIC}/dlq/(?P<partition>[0-9]{{1,9}})/(?P<offset>[0-9]{{1,18}})/redrive$",
        dead_letters.Redrive.as_view(),
        name="redrive",
    ),
    re_path(rf"^schedules/{TOPIC}/$", schedules.ScheduleList.as_view(), name="schedules"),
    # Schedule ids may hold slashes too (a queue's retries: kmq-retry/<kmq-id>/<n>).
    re_path(rf"^schedules/{TOPIC}/(?P<schedule_id>{ANY})/fire$", schedules.FireNow.as_view()),
    re_path(rf"^schedules/{TOPIC}/(?P<schedule_id>{ANY})$", schedules.ScheduleDetail.as_view()),
]
