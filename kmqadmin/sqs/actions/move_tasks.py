"""Message move tasks: StartMessageMoveTask, ListMessageMoveTasks and
CancelMessageMoveTask, SQS's DLQ redrive.

The source is a queue that is another queue's dead-letter queue (its
RedrivePolicy's target); its messages go back to the queues they were
dead-lettered from, or all to DestinationArn. A worker's job moves them
(moving.py), one task per source at a time, as SQS allows; the task's row
(SqsMoveTask) is what List answers from, and Cancel asks the job to stop
before its next batch. A task whose job has not written its heartbeat for
STALE_S (its worker was killed, or lost its database) has FAILED, saying
so: it no longer holds the source, and its job stops if it comes back.
What a dead job had taken but not sent on comes back to the dead-letter
queue after that queue's visibility timeout, for the next task. Starting
and cancelling are audited with the key.
"""

import uuid
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from kmqadmin.console.models import Queue, SqsMoveTask
from kmqadmin.console.services.audit import trail as audit
from kmqadmin.console.services.jobs import start
from kmqadmin.console.services.queues.stats import queue_stats
from kmqadmin.kafka.client.clock import epoch_ms
from kmqadmin.sqs import queue_names
from kmqadmin.sqs.actions.queues import dead_letter_sources
from kmqadmin.sqs.auth.caller import Caller
from kmqadmin.sqs.moving import move_messages
from kmqadmin.sqs.protocol.errors import (
    SqsError,
    invalid_parameter_value,
    missing_parameter,
    service_unavailable,
)
from kmqadmin.sqs.protocol.params import Params, integer
from kmqadmin.sqs.registered import cluster, queue_named

MAX_RATE = 500  # SQS's most messages per second
MAX_LISTED = 10
STALE_S = 30  # past a broker's worst stall of a batch's sends (30 s flush)


def start_message_move_task(params: Params, caller: Caller) -> dict[str, Any]:
    source = _queue(params.get("SourceArn"), "SourceArn")
    target = _destination(params)
    rate = integer(params, "MaxNumberOfMessagesPerSecond", 1, MAX_RATE)
    if not dead_letter_sources(source):
        raise invalid_parameter_value("Source queue must be configured as a Dead Letter Queue.")
    if target == source.topic:
        raise invalid_parameter_value("The destination cannot be the source queue.")
    depth = queue_stats(source).depth
    if depth is None:
        raise service_unavailable("The source queue's messages cannot be counted now: Kafka?")
    _give_up_dead(source)
    task = _created(source, target, rate, depth, caller)
    after = {
        "task": task.handle,
        "destination": target or "each message's source queue",
        "to move": depth,
        "key": caller.key_id,
    }
    with audit.action(caller.user, "sqs.StartMessageMoveTask", source.topic, after=after):
        try:
            start(move_messages, caller.user, task.pk)
        except Exception as exc:  # Celery's broker away: the task never ran
            SqsMoveTask.objects.filter(pk=task.pk).update(
                status=SqsMoveTask.FAILED, failure_reason=f"not started: {exc}"[:1000]
            )
            raise service_unavailable(f"The move task could not be started: {exc}") from exc
    return {"TaskHandle": task.handle}


def _destination(params: Params) -> str:
    """DestinationArn's queue topic; "" for each message's own queue."""
    destination = params.get("DestinationArn")
    return _queue(destination, "DestinationArn").topic if destination else ""


def _created(
    source: Queue, target: str, rate: int | None, depth: int, caller: Caller
) -> SqsMoveTask:
    """The task's row, unless one is active on ``source`` already."""
    with transaction.atomic():
        Queue.objects.select_for_update().filter(pk=source.pk).first()  # one start at a time
        if SqsMoveTask.objects.filter(source=source, status__in=SqsMoveTask.ACTIVE).exists():
            raise SqsError(
                "UnsupportedOperation",
                "There is already a task running. Only one active task is allowed for a "
                "source queue at a given time.",
                code="AWS.SimpleQueueService.UnsupportedOperation",
            )
        return SqsMoveTask.objects.create(
            handle=uuid.uuid4().hex,
            source=source,
            destination=target,
            max_per_second=rate,
            to_move=depth,
            started_by=caller.user,
        )


def list_message_move_tasks(params: Params, caller: Caller) -> dict[str, Any]:
    source = _queue(params.get("SourceArn"), "SourceArn")
    most = integer(params, "MaxResults", 1, MAX_LISTED) or 1
    _give_up_dead(source)
    tasks = SqsMoveTask.objects.filter(source=source).order_by("-started_at", "-pk")[:most]
    return {"Results": [_entry(task) for task in tasks]}


def cancel_message_move_task(params: Params, caller: Caller) -> dict[str, Any]:
    handle = params.get("TaskHandle")
    if not isinstance(handle, str) or not handle:
        raise missing_parameter("TaskHandle")
    task = SqsMoveTask.objects.filter(handle=handle, source__cluster=cluster()).first()
    if task is not None:
        _give_up_dead(task.source)
        task.refresh_from_db()
    if task is None or task.status != SqsMoveTask.RUNNING:
        raise _not_found("No running message move task has this handle.")
    after = {"task": handle, "key": caller.key_id}
    with audit.action(caller.user, "sqs.CancelMessageMoveTask", task.source.topic, after=after):
        SqsMoveTask.objects.filter(pk=task.pk, status=SqsMoveTask.RUNNING).update(
            status=SqsMoveTask.CANCELLING
        )
    task.refresh_from_db(fields=["moved"])
    return {"ApproximateNumberOfMessagesMoved": task.moved}


def _give_up_dead(source: Queue) -> None:
    """The source's tasks whose jobs stopped writing heartbeats, FAILED."""
    since = timezone.now() - timedelta(seconds=STALE_S)
    SqsMoveTask.objects.filter(
        source=source, status__in=SqsMoveTask.ACTIVE, beat_at__lt=since
    ).update(
        status=SqsMoveTask.FAILED,
        failure_reason=f"its job stopped: no heartbeat for {STALE_S} s (its worker died?)",
    )


def _queue(arn: object, parameter: str) -> Queue:
    if not arn:
        raise missing_parameter(parameter)
    name = queue_names.from_arn(arn, parameter)
    found = queue_named(name)
    if found is None:
        raise _not_found(
            f"The resource that you specified for the {parameter} parameter does not exist."
        )
    return found


def _entry(task: SqsMoveTask) -> dict[str, Any]:
    """As SQS lists a task: the handle only while it runs, the failure only
    once it failed."""
    entry: dict[str, Any] = {
        "Status": task.status,
        "SourceArn": queue_names.arn(task.source.topic),
        "ApproximateNumberOfMessagesMoved": task.moved,
        "ApproximateNumberOfMessagesToMove": task.to_move,
        "StartedTimestamp": epoch_ms(task.started_at),
    }
    if task.status == SqsMoveTask.RUNNING:
        entry["TaskHandle"] = task.handle
    if task.destination:
        entry["DestinationArn"] = queue_names.arn(task.destination)
    if task.max_per_second:
        entry["MaxNumberOfMessagesPerSecond"] = task.max_per_second
    if task.failure_reason:
        entry["FailureReason"] = task.failure_reason
    return entry


def _not_found(message: str) -> SqsError:
    return SqsError("ResourceNotFoundException", message)
