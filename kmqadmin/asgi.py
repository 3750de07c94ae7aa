"""ASGI entry point: SQS requests to the SQS endpoint, other HTTP to Django,
WebSockets to Channels consumers."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kmqadmin.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs the app registry)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from kmqadmin.console.live.routing import websocket_urlpatterns  # noqa: E402
from kmqadmin.console.metrics.websockets import CountWebSockets  # noqa: E402
from kmqadmin.sqs.endpoint import SqsEndpoint  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": SqsEndpoint(django_asgi_app),
        "websocket": CountWebSockets(
            AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
        ),
    }
)
