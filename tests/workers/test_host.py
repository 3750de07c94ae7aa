"""ServiceHost's reconciling (pure logic: services that only record calls)."""

from kmqadmin.kafka.ownership.service import Service
from kmqadmin.workers.host import ServiceHost


class Recorded(Service):
    def __init__(self, name: str, log: list[str]) -> None:
        super().__init__()
        self.name, self.log = name, log

    def serve(self) -> None:
        self._stop.wait()

    def start(self) -> None:
        self.log.append(f"start {self.name}")
        super().start()

    def stop(self, timeout: float = 30.0) -> None:
        self.log.append(f"stop {self.name}")
        super().stop(timeout)


def test_reconcile_starts_the_new_stops_the_gone_and_keeps_the_rest() -> None:
    log: list[str] = []
    host = ServiceHost()

    def make(name: str):
        return lambda: Recorded(name, log)

    host.reconcile({"a": make("a"), "b": make("b")})
    kept = host.running["a"]
    host.reconcile({"a": make("a2"), "c": make("c")})
    assert log == ["start a", "start b", "stop b", "start c"]
    assert host.running["a"] is kept  # same key: not restarted
    host.stop_all()
    assert sorted(log[4:]) == ["stop a", "stop c"]
    assert host.running == {}
