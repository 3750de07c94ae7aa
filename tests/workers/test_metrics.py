"""Prometheus metrics after real traffic: a real worker (prefork pool, so the
jobs run in a child and reach the port through the multiprocess directory)
and a real web process, both scraped over HTTP."""

import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from websockets.sync.client import connect

from kmqadmin.console.cli.processes import web
from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.embedded.broker import EmbeddedBroker, free_port
from kmqadmin.kmq import QueueClient, QueueConfig, QueueProducer
from kmqadmin.scheduler import ScheduleClient, SchedulerConfig
from tests.process import celery_worker, kill9, manage, spawn, wait_for
from tests.schedule_helpers import in_seconds

REGISTER = """
from kmqadmin.console.models import Cluster, Queue, ScheduleTopic
cluster, _ = Cluster.objects.get_or_create(name="local")
queue = Queue.objects.create(cluster=cluster, topic="{topic}", group_id="{topic}-workers",
                             partitions=3, message_timeout_ms=120000, max_redeliveries=3)
ScheduleTopic.objects.create(cluster=cluster, topic="{topic}-sched", group_id="{topic}-sched",
                             partitions=3)
print(queue.pk)
"""
SESSION = """
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
user = get_user_model().objects.create_superuser("metrics", "m@example.com", "pw-metrics-1")
session = SessionStore()
session["_auth_user_id"] = str(user.pk)
session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
session["_auth_user_hash"] = user.get_session_auth_hash()
session.create()
print(session.session_key)
"""
# One job that succeeds (a redrive whose filter matches no letter) and one
# that fails (no such queue).
JOBS = """
from kmqadmin.console.services.jobs import redrive_letters
from kmqadmin.kmq import LetterFilter
match = LetterFilter(key=b"no letter has this key").to_json()
redrive_letters.delay({queue_id}, 0, match, None)
redrive_letters.delay(999999, 0, match, None)
"""

type Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(url: str) -> Samples:
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


@pytest.fixture
def running(kafka: EmbeddedBroker, topic: str, tmp_path: Path) -> Iterator[dict]:
    """A registered queue and schedules topic, a worker and a web process."""
    worker_port, web_port = free_port(), free_port()
    settings = {
        "KMQ_DATA_DIR": str(tmp_path),
        "KAFKA_BOOTSTRAP_SERVERS": kafka.bootstrap_servers,
        "KMQ_SERVICES_REFRESH_S": "1",
        "KMQ_WORKER_METRICS_PORT": str(worker_port),
    }
    assert manage("migrate", **settings).returncode == 0
    registered = manage("shell", "-c", REGISTER.format(topic=topic), **settings)
    assert registered.returncode == 0, registered.stderr
    session = manage("shell", "-c", SESSION, **settings)
    assert session.returncode == 0, session.stderr
    queue = QueueConfig(
        bootstrap_servers=kafka.bootstrap_servers,
        topic=topic,
        group_id=f"{topic}-workers",
        message_timeout_ms=120_000,
        max_redeliveries=3,
    )
    schedules = SchedulerConfig(kafka.bootstrap_servers, f"{topic}-sched", f"{topic}-sched")
    queue.ensure_topics(partitions=3)
    schedules.ensure_topics(partitions=3)
    ensure_topics(kafka.bootstrap_servers, {f"{topic}-target": 3})
    dirs = {name: tmp_path / f"prom-{name}" for name in ("worker", "web")}
    for folder in dirs.values():
        folder.mkdir()
    log = tmp_path / "processes.log"
    celery = celery_worker("--pool", "prefork", "-c", "1", "-l", "INFO")
    argv = {"worker": celery, "web": web("127.0.0.1", web_port)}
    procs = [
        spawn(argv[name], log, **settings, PROMETHEUS_MULTIPROC_DIR=str(dirs[name]))
        for name in ("worker", "web")
    ]
    try:
        yield {
            "queue": queue,
            "queue_id": int(registered.stdout.split()[-1]),
            "schedules": schedules,
            "session": session.stdout.split()[-1],
            "settings": settings,
            "worker": f"http://127.0.0.1:{worker_port}/metrics",
            "web": f"http://127.0.0.1:{web_port}",
            "log": log,
        }
    finally:
        for proc in procs:
            if proc.poll() is None:
                kill9(proc)


def reachable(url: str) -> Samples | None:
    try:
        return scrape(url)
    except (urllib.error.URLError, ConnectionError):
        return None


def test_both_endpoints_move_exactly_as_the_traffic_did(running: dict, topic: str) -> None:
    worker, web, queue = running["worker"], running["web"], running["queue"]
    sched = f"{topic}-sched"
    try:
        wait_for(
            lambda: (
                (s := reachable(worker))
                and value(s, "kmqadmin_tracker_partitions", queue=topic) == 3
                and value(s, "kmqadmin_scheduler_rebalances_total", topic=sched) >= 1
            ),
            90,
            "the worker's tracker and scheduler, on its metrics port",
        )
    except AssertionError as exc:
        raise AssertionError(
            f"{exc}\n{running['log'].read_text(errors='replace')[-3000:]}"
        ) from exc
    before = scrape(worker)
    assert value(before, "kmqadmin_tracker_acked_total", queue=topic) == 0

    producer = QueueProducer(queue)
    for i in range(12):
        producer.send(value=b"m%d" % i)
    producer.flush()
    with QueueClient(queue) as client:
        got: list = []
        wait_for(lambda: got.extend(client.poll(12 - len(got), 0.5)) or len(got) == 12, 30, "12")
        for m in got[:6]:
            client.ack(m)
        for m in got[6:10]:
            client.reject(m, "bad")
        client.flush()  # two stay in flight
        for i in range(3):  # never polled: the depth
            producer.send(value=b"waiting%d" % i)
        producer.flush()
        with ScheduleClient(running["schedules"]) as schedules:
            schedules.schedule("fires", in_seconds(1), f"{topic}-target", value=b"x")
            schedules.schedule("nowhere", in_seconds(1), f"{topic}-missing", value=b"x")

        def settled() -> Samples | None:
            s = scrape(worker)
            done = (
                value(s, "kmqadmin_tracker_acked_total", queue=topic) >= 6
                and value(s, "kmqadmin_tracker_dead_lettered_total", queue=topic) >= 4
                and value(s, "kmqadmin_schedules_fired_total", topic=sched) >= 1
                and value(s, "kmqadmin_schedules_undeliverable_total", topic=sched) >= 1
            )
            return s if done else None

        after = wait_for(settled, 60, "the worker's counters to move", every=0.3)
        assert value(after, "kmqadmin_tracker_acked_total", queue=topic) == 6
        assert value(after, "kmqadmin_tracker_dead_lettered_total", queue=topic) == 4
        assert value(after, "kmqadmin_tracker_redelivered_total", queue=topic) == 0
        assert value(after, "kmqadmin_tracker_undecodable_total", queue=topic) == 0
        assert value(after, "kmqadmin_schedules_fired_total", topic=sched) == 1
        assert value(after, "kmqadmin_schedules_undeliverable_total", topic=sched) == 1
        late = "kmqadmin_schedules_lateness_seconds"
        assert value(after, f"{late}_count", topic=sched) == 1
        assert value(after, f"{late}_bucket", topic=sched, le="+Inf") == 1
        assert 0 <= value(after, f"{late}_sum", topic=sched) < 30

        def queue_gauges() -> Samples | None:
            s = scrape(f"{web}/metrics")
            in_flight = value(s, "kmqadmin_queue_in_flight", queue=topic)
            return (
                s if value(s, "kmqadmin_queue_depth", queue=topic) == 3 and in_flight == 2 else None
            )

        gauges = wait_for(queue_gauges, 30, "the web's queue gauges", every=0.3)
        assert value(gauges, "kmqadmin_queue_stats_up", queue=topic) == 1
        assert 0 < value(gauges, "kmqadmin_queue_oldest_in_flight_seconds", queue=topic) < 120
        assert value(gauges, "kmqadmin_queue_dead_letters", queue=topic) >= 4

    jobs = manage("shell", "-c", JOBS.format(queue_id=running["queue_id"]), **running["settings"])
    assert jobs.returncode == 0, jobs.stderr
    task = "kmqadmin.workers.tasks.redrive_letters"
    count = "kmqadmin_job_duration_seconds_count"
    ran = wait_for(
        lambda: (
            (s := scrape(worker))
            and value(s, count, task=task, outcome="success")
            + value(s, count, task=task, outcome="failure")
            >= 2
            and s
        ),
        60,
        "two jobs, counted in the pool's child",
        every=0.3,
    )
    assert value(ran, count, task=task, outcome="success") == 1
    assert value(ran, count, task=task, outcome="failure") == 1


def test_web_counts_requests_by_route_and_status_and_open_websockets(running: dict) -> None:
    web = running["web"]
    wait_for(lambda: reachable(f"{web}/metrics"), 60, "the web process")
    first = scrape(f"{web}/metrics")
    healthz = ("kmqadmin_http_requests_total", "GET", "console:healthz", "200")
    for _ in range(2):
        urllib.request.urlopen(f"{web}/healthz", timeout=10).close()
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{web}/no-such-page", timeout=10)
    assert missing.value.code == 404
    s = scrape(f"{web}/metrics")

    def requests(samples: Samples, route: str, status: str) -> float:
        return value(samples, healthz[0], method="GET", route=route, status=status)

    assert requests(s, "console:healthz", "200") - requests(first, "console:healthz", "200") == 2
    assert requests(s, "unmatched", "404") - requests(first, "unmatched", "404") == 1
    assert requests(s, "console:metrics", "200") - requests(first, "console:metrics", "200") == 1

    ws_url = web.replace("http://", "ws://") + "/ws/dashboard/"
    headers = {"Cookie": f"sessionid={running['session']}", "Origin": web}
    with connect(ws_url, additional_headers=headers, open_timeout=10) as socket:
        socket.recv(timeout=30)  # the first push: accepted, and live
        opened = scrape(f"{web}/metrics")
        assert value(opened, "kmqadmin_websocket_open") == 1
        assert value(opened, "kmqadmin_websocket_accepted_total") == 1
    wait_for(
        lambda: value(scrape(f"{web}/metrics"), "kmqadmin_websocket_open") == 0,
        10,
        "the closed socket to be counted out",
    )
