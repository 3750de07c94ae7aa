"""Celery on our queues through kombu's SQS transport (boto3 for sends and
queue calls, pycurl for its long-polling receives), as a service moved off
Amazon SQS runs it: real worker processes, the real web process, broker,
tracker and scheduler. A task runs once; one sent with DelaySeconds runs
no sooner; a retry with a countdown runs again no sooner; a task that
always fails ends in the dead-letter queue its RedrivePolicy names after
maxReceiveCount runs; a worker killed with -9 mid-task loses no task and
runs none twice."""

import base64
import json
import subprocess
import sys
import time
import urllib.parse
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueConfig, RedeliveryTracker
from kmqadmin.scheduler import Scheduler
from tests.process import ROOT, env, kill9, wait_for
from tests.sqs.clients import Web, sqs

WORKER = [
    sys.executable,
    "-m",
    "celery",
    "-A",
    "tests.sqs.celery.tasks",
    "worker",
    "--pool",
    "solo",
    "--without-heartbeat",
    "--without-gossip",
    "--without-mingle",
    "--loglevel",
    "INFO",
]


@dataclass(frozen=True)
class CeleryQueue:
    name: str
    dlq_url: str
    notes: Path
    settings: dict[str, str]

    def lines(self, kind: str) -> list[list[str]]:
        text = self.notes.read_text() if self.notes.exists() else ""
        return [line.split()[1:] for line in text.splitlines() if line.startswith(kind + " ")]

    def worker(self, log: Path) -> subprocess.Popen:
        with log.open("ab") as out:
            return subprocess.Popen(
                [*WORKER, "-n", f"{uuid.uuid4().hex[:6]}@%h"],
                cwd=ROOT,
                env=env(**self.settings),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )


@pytest.fixture
def celery_queue(
    web: Web, kafka: EmbeddedBroker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[CeleryQueue]:
    """A queue with the worker's 5 s visibility timeout whose RedrivePolicy moves a
    message received twice to a queue of its own, with the tracker and the
    scheduler a kmqadmin worker would host for it."""
    name = f"celery-{uuid.uuid4().hex[:8]}"
    boss = sqs(web, "boss")
    dlq_url = boss.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
    dlq_arn = boss.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])
    policy = {"deadLetterTargetArn": dlq_arn["Attributes"]["QueueArn"], "maxReceiveCount": "2"}
    boss.create_queue(
        QueueName=name,
        Attributes={"VisibilityTimeout": "5", "RedrivePolicy": json.dumps(policy)},
    )
    key = web.keys["worker"]
    secret = urllib.parse.quote(key["AWS_SECRET_ACCESS_KEY"], safe="")
    settings = {
        "KMQ_TEST_CELERY_BROKER": f"sqs://{key['AWS_ACCESS_KEY_ID']}:{secret}@127.0.0.1:{web.port}",
        "KMQ_TEST_CELERY_QUEUE": name,
        "KMQ_TEST_CELERY_NOTES": str(tmp_path / "notes"),
    }
    for variable, value in settings.items():  # this process sends the tasks
        monkeypatch.setenv(variable, value)
    from tests.sqs.celery.tasks import app

    app.conf.update(broker_url=settings["KMQ_TEST_CELERY_BROKER"], task_default_queue=name)
    config = QueueConfig(
        kafka.bootstrap_servers,
        name,
        f"{name}-workers",
        dlq_topic=f"{name}-dlq",
        message_timeout_ms=5000,
        max_redeliveries=1,
        delayed_sends=True,
    )
    tracker, scheduler = RedeliveryTracker(config), Scheduler(config.scheduler_config())
    tracker.start()
    scheduler.start()
    try:
        yield CeleryQueue(name, dlq_url, tmp_path / "notes", settings)
    finally:
        scheduler.stop()
        tracker.stop()


def test_a_task_runs_once_a_retry_waits_its_countdown_and_a_failing_one_is_dead_lettered(
    web: Web, celery_queue: CeleryQueue, tmp_path: Path
) -> None:
    from tests.sqs.celery import tasks

    token = uuid.uuid4().hex
    added = tasks.add.delay(2, 3)
    sent_at = time.time()
    # kombu sends DelaySeconds given to apply_async: our scheduler holds it.
    delayed = tasks.add.apply_async((20, 22), DelaySeconds=2)
    tasks.flaky.delay(token)
    broken = tasks.broken.delay(token)
    worker = celery_queue.worker(tmp_path / "worker.log")
    try:
        dead = _dead_letter(web, celery_queue, tmp_path / "worker.log")
        wait_for(lambda: celery_queue.lines("flaky-done"), 60, "the retried task", 0.2)
        wait_for(lambda: len(celery_queue.lines("add")) == 2, 60, "the delayed task", 0.2)
    finally:
        kill9(worker)
    ran = {task_id: (total, float(at)) for total, task_id, at in celery_queue.lines("add")}
    assert ran[added.id][0] == "5"
    assert ran[delayed.id][0] == "42" and ran[delayed.id][1] >= sent_at + 2
    [[_, failed_at]] = celery_queue.lines("flaky-failed")
    [[_, done_at]] = celery_queue.lines("flaky-done")
    assert float(done_at) - float(failed_at) >= 2
    # Received twice (maxReceiveCount), run twice, then dead-lettered.
    assert celery_queue.lines("broken-failed") == [[token, broken.id]] * 2
    envelope = json.loads(base64.b64decode(dead["Body"]))
    assert envelope["headers"]["id"] == broken.id
    assert envelope["headers"]["task"] == "tests.sqs.celery.tasks.broken"


def test_a_worker_killed_mid_task_loses_no_task_and_runs_none_twice(
    celery_queue: CeleryQueue, tmp_path: Path
) -> None:
    from tests.sqs.celery import tasks

    tokens = [f"t{i}" for i in range(20)]
    for token in tokens:
        tasks.slow.delay(token, 0.5)
    log = tmp_path / "worker.log"
    first = celery_queue.worker(log)
    try:
        # Killed half a second into a task's sleep, 3 tasks done: its
        # message is received, not deleted (acks_late).
        wait_for(_mid_task(celery_queue, 3), 90, "the 4th task begun", 0.01)
    finally:
        kill9(first)
    [killed_in] = _started_not_done(celery_queue)
    done_before = [token for token, _ in celery_queue.lines("slow-done")]
    second = celery_queue.worker(log)
    try:
        wait_for(_all_done(celery_queue, tokens), 120, "every task done", 0.2)
    finally:
        kill9(second)
    runs = Counter(token for token, _ in celery_queue.lines("slow-done"))
    assert set(runs) == set(tokens), log.read_text()[-5000:]
    assert runs[killed_in] == 1  # came back to the second worker
    # The only task that may run twice is the last the killed worker
    # finished: its DeleteMessage may not have been sent when it died.
    twice = {token for token, count in runs.items() if count > 1}
    assert twice <= {done_before[-1]}, runs


def _mid_task(queue: CeleryQueue, done: int) -> Callable[[], bool]:
    return lambda: len(queue.lines("slow-done")) >= done and bool(_started_not_done(queue))


def _started_not_done(queue: CeleryQueue) -> list[str]:
    finished = {token for token, _ in queue.lines("slow-done")}
    return [token for token, _ in queue.lines("slow-started") if token not in finished]


def _all_done(queue: CeleryQueue, tokens: list[str]) -> Callable[[], bool]:
    return lambda: {token for token, _ in queue.lines("slow-done")} >= set(tokens)


def _dead_letter(web: Web, queue: CeleryQueue, log: Path) -> dict:
    """The one message that reaches the dead-letter queue, received there
    as any SQS queue's."""
    client = sqs(web, "worker")
    got: list[dict] = []

    def arrived() -> bool:
        answer = client.receive_message(QueueUrl=queue.dlq_url, WaitTimeSeconds=2)
        got.extend(answer.get("Messages", []))
        return bool(got)

    started = time.monotonic()
    try:
        wait_for(arrived, 90, "the dead letter", every=0)
    except AssertionError:
        raise AssertionError(log.read_text()[-5000:]) from None
    assert time.monotonic() - started < 90
    [dead] = got
    return dead
