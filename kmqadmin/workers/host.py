"""ServiceHost: one running service per wanted key, kept in step with the registry."""

import logging
from collections.abc import Callable, Hashable, Mapping

from kmqadmin.kafka.ownership.service import Service

log = logging.getLogger(__name__)


class ServiceHost:
    """Starts what is newly wanted and stops what no longer is.

    A key names a service *and its configuration*: when a queue's settings
    change, its key changes, so the old service stops and a new one starts
    with the new settings. Crashes are the service's own business
    (Service.run restarts it with backoff), so the host never polls health.
    """

    def __init__(self) -> None:
        self._running: dict[Hashable, Service] = {}

    @property
    def running(self) -> dict[Hashable, Service]:
        return dict(self._running)

    def reconcile(self, wanted: Mapping[Hashable, Callable[[], Service]]) -> None:
        for key in self._running.keys() - wanted.keys():
            log.info("stopping %s", key)
            self._running.pop(key).stop()
        for key, make in wanted.items():
            if key not in self._running:
                log.info("starting %s", key)
                service = make()
                service.start()
                self._running[key] = service

    def stop_all(self) -> None:
        self.reconcile({})
