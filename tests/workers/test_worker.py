"""The Celery worker hosts the trackers: real worker processes, killed with -9."""

import subprocess
from pathlib import Path

from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueClient, QueueConfig, QueueProducer
from tests.process import celery_worker, kill9, manage, spawn, wait_for

REGISTER = """
from kmqadmin.console.models import Cluster, Queue
cluster, _ = Cluster.objects.get_or_create(name="local")
Queue.objects.create(cluster=cluster, topic="{topic}", group_id="{topic}-workers",
                     partitions=3, message_timeout_ms=1000, max_redeliveries=20)
"""


def worker(settings: dict[str, str], log: Path) -> subprocess.Popen:
    return spawn(celery_worker("--pool", "solo", "-l", "INFO"), log, **settings)


def test_workers_redeliver_for_a_queue_registered_while_they_run_and_survive_kill_9(
    kafka: EmbeddedBroker, topic: str, tmp_path: Path
) -> None:
    settings = {
        "KMQ_DATA_DIR": str(tmp_path),
        "KAFKA_BOOTSTRAP_SERVERS": kafka.bootstrap_servers,
        "KMQ_SERVICES_REFRESH_S": "1",
    }
    assert manage("migrate", **settings).returncode == 0
    log = tmp_path / "worker.log"
    first = worker(settings, log)
    second = None
    try:
        registered = manage("shell", "-c", REGISTER.format(topic=topic), **settings)
        assert registered.returncode == 0, registered.stderr
        queue = QueueConfig(
            bootstrap_servers=kafka.bootstrap_servers,
            topic=topic,
            group_id=f"{topic}-workers",
            message_timeout_ms=1000,
            max_redeliveries=20,
        )
        queue.ensure_topics(partitions=3)
        producer = QueueProducer(queue)
        acked: set[bytes] = set()
        n = 600
        with QueueClient(queue) as client:

            def acked_at_least(count: int) -> bool:
                for m in client.poll(500, 0.2):
                    if m.delivery_count >= 2:  # only a redelivery is acked
                        client.ack(m)
                        acked.add(m.value)
                return len(acked) >= count

            for i in range(n // 2):
                producer.send(value=b"m%d" % i)
            producer.flush()
            wait_for(lambda: acked_at_least(n // 4), 90, "redeliveries by the worker", every=0)
            kill9(first)
            second = worker(settings, log)
            for i in range(n // 2, n):
                producer.send(value=b"m%d" % i)
            producer.flush()
            try:
                wait_for(lambda: acked_at_least(n), 120, "every message redelivered", every=0)
            except AssertionError as exc:
                tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
                raise AssertionError(f"{exc}; {n - len(acked)} left; worker log:\n{tail}") from exc
        assert acked == {b"m%d" % i for i in range(n)}
        second.terminate()  # a warm shutdown stops the hosted trackers, then exits
        assert second.wait(60) == 0, log.read_text(errors="replace")[-3000:]
        assert "starting tracker" in log.read_text()
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                kill9(proc)
