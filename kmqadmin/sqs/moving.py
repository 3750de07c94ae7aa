"""The job behind a message move task: a worker takes the dead-letter
queue's messages as one of its workers (its group, start markers and all)
and sends each, as a fresh message, back to the queue it was dead-lettered
from (the queue its kmq-id names) or to the task's destination; a batch is
acknowledged in the dead-letter queue only once the broker has its copies.

So a worker killed mid-batch loses nothing: what it took and had not
acknowledged comes back to the dead-letter queue after its visibility
timeout and is moved by the next task (a message may be moved twice then,
SQS's at-least-once). A message with no queue to go back to (another
producer's record, or its queue no longer registered) is rejected to the
dead-letter queue's own DLQ with the reason, never lost, and not counted
as moved.

The task moves as many messages as the queue held when it started
(ApproximateNumberOfMessagesToMove), in batches of at most a second's worth
at MaxNumberOfMessagesPerSecond's pace; it stops sooner when the queue has
had nothing for IDLE_S, or when its task is no longer RUNNING (cancelled,
or given up as dead; looked at between batches). Its count and a heartbeat
are written every poll: a task with no heartbeat for STALE_S is dead
(move_tasks.py).
"""

import logging
import time

from celery import shared_task
from django.utils import timezone

from kmqadmin.console.models import Queue, SqsMoveTask
from kmqadmin.kafka.client.checked_producer import CheckedProducer
from kmqadmin.kmq import QueueClient
from kmqadmin.kmq.copies import send_again
from kmqadmin.kmq.headers import parse_message_id
from kmqadmin.kmq.message import Message

log = logging.getLogger(__name__)

BATCH = 100
POLL_S = 1.0
IDLE_S = 10.0  # the group join included


@shared_task(name="kmqadmin.sqs.move_messages")
def move_messages(task_id: int) -> dict:
    task = SqsMoveTask.objects.select_related("source__cluster").get(pk=task_id)
    try:
        _move(task)
    except Exception as exc:
        log.exception("message move task %s failed", task.handle)
        _end(task, SqsMoveTask.FAILED, f"{type(exc).__name__}: {exc}"[:1000])
        raise
    return {"moved": task.moved}


def _move(task: SqsMoveTask) -> None:
    config = task.source.config()
    producer = CheckedProducer(config.bootstrap_servers, config.kafka_config)
    registered = set(
        Queue.objects.filter(cluster=task.source.cluster)
        .exclude(pk=task.source.pk)
        .values_list("topic", flat=True)
    )
    idle_since, started = time.monotonic(), time.monotonic()
    size, taken = min(BATCH, task.max_per_second or BATCH), 0
    with QueueClient(config) as client:
        while taken < task.to_move and _running(task):
            batch = client.poll(min(size, task.to_move - taken), POLL_S)
            if batch:
                idle_since, taken = time.monotonic(), taken + len(batch)
                task.moved += _send_back(client, producer, task, batch, registered)
            elif time.monotonic() - idle_since > IDLE_S:
                break
            SqsMoveTask.objects.filter(pk=task.pk).update(moved=task.moved, beat_at=timezone.now())
            _pace(taken, task.max_per_second, started)
    _end(task, SqsMoveTask.COMPLETED)


def _send_back(
    client: QueueClient,
    producer: CheckedProducer,
    task: SqsMoveTask,
    batch: list[Message],
    registered: set[str],
) -> int:
    """The batch sent on with one wait, then acknowledged; how many moved
    (the others rejected)."""
    by_topic: dict[str, list[Message]] = {}
    for message in batch:
        topic = task.destination or _origin(message)
        if topic in registered:
            by_topic.setdefault(topic, []).append(message)
        else:
            why = f"no queue to move it to: {topic!r} is no other queue"
            log.warning("%s/%d/%d: %s", message.topic, message.partition, message.offset, why)
            client.reject(message, why)
    for topic, messages in by_topic.items():
        send_again(producer, topic, [m.record for m in messages])
    moved = [m for messages in by_topic.values() for m in messages]
    client.ack_all(moved)
    client.flush()
    return len(moved)


def _origin(message: Message) -> str:
    """The queue a dead letter came from, as its kmq-id names it (another
    producer's record names the dead-letter queue itself)."""
    found = parse_message_id(message.id)
    return found[0] if found is not None else ""


def _running(task: SqsMoveTask) -> bool:
    """False once cancelled (CancelMessageMoveTask) or given up as dead."""
    status = SqsMoveTask.objects.values_list("status", flat=True).get(pk=task.pk)
    return status == SqsMoveTask.RUNNING


def _pace(taken: int, per_second: int | None, started: float) -> None:
    """Sleeps while ahead of MaxNumberOfMessagesPerSecond."""
    if per_second:
        ahead = taken / per_second - (time.monotonic() - started)
        if ahead > 0:
            time.sleep(ahead)


def _end(task: SqsMoveTask, status: str, reason: str = "") -> None:
    """Ended as ``status``; a task cancelled meanwhile ends CANCELLED."""
    tasks = SqsMoveTask.objects.filter(pk=task.pk)
    tasks.filter(status=SqsMoveTask.CANCELLING).update(status=SqsMoveTask.CANCELLED)
    tasks.filter(status=SqsMoveTask.RUNNING).update(status=status, failure_reason=reason)
