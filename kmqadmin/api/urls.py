from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from . import views

app_name = "api"

TOPIC = r"(?P<topic>[a-zA-Z0-9._-]{1,249})"

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    path("queues/", views.QueueList.as_view(), name="queues"),
    re_path(rf"^queues/{TOPIC}/messages/$", views.Enqueue.as_view(), name="enqueue"),
    re_path(rf"^queues/{TOPIC}/in-flight/$", views.InFlightList.as_view(), name="in-flight"),
    # A kmq-id holds slashes (topic/partition/offset): the action is the last segment.
    re_path(
        rf"^queues/{TOPIC}/messages/(?P<message_id>.+)/(?P<action>ack|retry|extend|reject)$",
        views.MessageAction.as_view(),
        name="message-action",
    ),
]
