"""A Celery app whose broker is our SQS endpoint through kombu's SQS
transport, configured as a service moved off Amazon SQS would be: only the
broker URL and ``is_secure`` differ. Its tasks note each run on a line of
a file, so a test counts runs across worker processes, killed ones too."""

import os
import time
from pathlib import Path

from celery import Celery

# Not the process's current app: a test process that imports this module
# runs kmqadmin's own jobs too, which must keep kmqadmin's broker.
app = Celery("sqs_tasks", set_as_current=False)
app.conf.update(
    broker_url=os.environ.get("KMQ_TEST_CELERY_BROKER", "sqs://"),
    broker_transport_options={
        "region": "eu-west-3",
        "is_secure": False,
        # As Celery's guide for SQS asks: a visibility timeout longer than
        # a countdown plus the task plus a long poll, which can hold a
        # worker's ack back (kombu answers its hub's requests in turn).
        "wait_time_seconds": 2,
        "visibility_timeout": 5,
    },
    broker_connection_retry_on_startup=True,
    task_default_queue=os.environ.get("KMQ_TEST_CELERY_QUEUE", "celery"),
    # Acknowledged when done, as a service that must not lose work runs it:
    # a worker killed mid-task leaves its message to come back.
    task_acks_late=True,
    worker_prefetch_multiplier=1,
    worker_hijack_root_logger=False,
)


def note(*words: object) -> None:
    """One line per event, appended whole (O_APPEND) by whichever process."""
    with Path(os.environ["KMQ_TEST_CELERY_NOTES"]).open("a") as notes:
        notes.write(" ".join(map(str, words)) + "\n")


@app.task(bind=True)
def add(self, x: int, y: int) -> int:
    note("add", x + y, self.request.id, time.time())
    return x + y


@app.task(bind=True, max_retries=1)
def flaky(self, token: str) -> None:
    """Fails once and asks to run again in 2 s: Celery sends it again at
    once with its ETA, and the worker that receives it holds it till then."""
    if self.request.retries == 0:
        note("flaky-failed", token, time.time())
        raise self.retry(countdown=2)
    note("flaky-done", token, time.time())


@app.task(bind=True, acks_on_failure_or_timeout=False)
def broken(self, token: str) -> None:
    """Always fails and is rejected, not acknowledged: with a RedrivePolicy
    kombu leaves the message to the queue, which dead-letters it after
    maxReceiveCount receives."""
    note("broken-failed", token, self.request.id)
    raise RuntimeError("broken on purpose")


@app.task
def slow(token: str, seconds: float) -> None:
    note("slow-started", token, os.getpid())
    time.sleep(seconds)
    note("slow-done", token, os.getpid())
