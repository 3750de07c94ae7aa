"""Counts the WebSockets the console accepts and holds open.

An ASGI wrapper around the WebSocket router rather than code in each
consumer: it sees the accept go out and the connection end, whatever the
consumer does in between.
"""

from typing import Any

from prometheus_client import Counter, Gauge

ACCEPTED = Counter("kmqadmin_websocket_accepted", "WebSocket connections accepted")
# livesum: summed over the web processes, leaving out any marked dead
# (prometheus_client.multiprocess.mark_process_dead, for a server that
# restarts its workers; one web process per tmpfs, as in compose, needs none).
OPEN = Gauge(
    "kmqadmin_websocket_open", "WebSocket connections open now", multiprocess_mode="livesum"
)

type Scope = dict[str, Any]


class CountWebSockets:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        accepted = False

        async def counting_send(message: dict[str, Any]) -> None:
            nonlocal accepted
            if message["type"] == "websocket.accept" and not accepted:
                accepted = True
                ACCEPTED.inc()
                OPEN.inc()
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            if accepted:
                OPEN.dec()
