"""ASGI entry point: SQS requests to the SQS endpoint, other HTTP to Django,
WebSockets to Channels consumers."""

import os
import sys
from importlib import import_module

from django.core.asgi import get_asgi_application

# A thread waiting for the GIL gets it after this at most (Python's default
# is 5 ms). The web process is a dozen threads handing short requests along
# (event loop, pool threads, Kafka clients' callbacks): each handover waited
# up to the default, and bench/sqs.py's receive p99 fell by a fifth without it.
GIL_SWITCH_S = 0.0005
sys.setswitchinterval(GIL_SWITCH_S)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kmqadmin.settings")
django_asgi_app = get_asgi_application()

from django.conf import settings  # noqa: E402

# Django imports the URL conf, and with it every view, on the first request
# it routes: 1.6 s of a /healthz on an idle machine, past a liveness probe's
# timeout (Kubernetes' default is 1 s) on a busy one. The process pays it
# before it listens instead.
import_module(settings.ROOT_URLCONF)

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
