"""WebSocket routes for the console's live views."""

from django.urls import re_path

from kmqadmin.console.live import consumers, tail
from kmqadmin.kmq import names

websocket_urlpatterns = [
    re_path(r"^ws/dashboard/$", consumers.DashboardConsumer.as_asgi()),
    re_path(
        rf"^ws/queues/(?P<topic>{names.TOPIC_NAME})/in-flight/$",
        consumers.InFlightConsumer.as_asgi(),
    ),
    re_path(
        rf"^ws/clusters/(?P<cluster>[-a-zA-Z0-9_]+)/topics/(?P<topic>{names.TOPIC_NAME})/tail/$",
        tail.TailConsumer.as_asgi(),
    ),
]
