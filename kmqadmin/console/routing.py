"""WebSocket routes for the console's live views."""

from django.urls import re_path

from . import consumers

websocket_urlpatterns = [
    re_path(r"^ws/dashboard/$", consumers.DashboardConsumer.as_asgi()),
    re_path(
        r"^ws/queues/(?P<topic>[a-zA-Z0-9._-]{1,249})/in-flight/$",
        consumers.InFlightConsumer.as_asgi(),
    ),
]
