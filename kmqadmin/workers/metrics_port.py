"""The worker's metrics port: what Prometheus scrapes on each worker.

The port is read from the environment in settings.py (KMQ_WORKER_METRICS_PORT,
KMQ_WORKER_METRICS_ADDR), the way kmqadmin/env.py reads every other piece of
deployment: it belongs to the process, not to the database, because each
worker on one host needs a port of its own and the scrape configuration
names it. 0 turns the port off. A port already taken is logged and the
worker runs on without one: metrics never stop the queue.
"""

import logging
from wsgiref.simple_server import WSGIServer

from django.conf import settings
from prometheus_client import start_http_server

from kmqadmin.metrics.exposition import registry
from kmqadmin.workers import job_metrics  # noqa: F401  (connects the job receivers before the pool forks)
from kmqadmin.workers.host import ServiceHost
from kmqadmin.workers.metrics import HostedServices

log = logging.getLogger(__name__)


def serve(host: ServiceHost) -> WSGIServer | None:
    """Serves ``/metrics`` on a thread of its own; None when off or the port is taken."""
    port, addr = settings.KMQ_WORKER_METRICS_PORT, settings.KMQ_WORKER_METRICS_ADDR
    if not port:
        return None
    try:
        server, _ = start_http_server(port, addr, registry=registry(HostedServices(host)))
    except OSError as exc:
        log.error("no metrics port on %s:%d: %s", addr, port, exc)
        return None
    log.info("metrics on http://%s:%d/metrics", addr, port)
    return server


def close(server: WSGIServer | None) -> None:
    if server is not None:
        server.shutdown()
        server.server_close()
