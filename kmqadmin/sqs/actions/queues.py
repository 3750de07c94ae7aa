"""The queue actions: CreateQueue, GetQueueUrl, ListQueues, DeleteQueue,
ListDeadLetterSourceQueues.

An SQS queue is a queue registered in the console, on the cluster
KMQ_SQS_CLUSTER names: one made with CreateQueue is registered (and its
topics created) as the console's registry does it, and a queue registered
in the console is an SQS queue at once. CreateQueue of an existing queue
with the same attributes answers its URL (SQS's idempotence), so a client
such as Celery, which creates its queues on start, needs no admin role
once they exist; making one does.
"""

from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction

from kmqadmin.console.models import Queue, SqsQueue
from kmqadmin.console.services.audit import trail as audit
from kmqadmin.console.services.roles import Role
from kmqadmin.kafka.admin.topics import delete_topics
from kmqadmin.sqs import queue_names
from kmqadmin.sqs.actions import queue_attributes, tags
from kmqadmin.sqs.auth.caller import Caller
from kmqadmin.sqs.protocol.errors import SqsError, access_denied, queue_does_not_exist
from kmqadmin.sqs.protocol.params import Params, integer, text
from kmqadmin.sqs.registered import cluster, lookup

DELETED_RECENTLY = timedelta(seconds=60)  # SQS's wait before a name is free again


def create_queue(params: Params, caller: Caller) -> dict[str, Any]:
    name = queue_names.check_new(params.get("QueueName"))
    attributes = queue_attributes.given(params)
    wanted_tags = tags.given(params, "tags", name)
    existing = Queue.objects.filter(cluster=cluster(), topic=name).first()
    if existing is None:
        if caller.role < Role.ADMIN:
            raise access_denied("CreateQueue of a new queue", Role.ADMIN, caller)
        try:
            _create(name, attributes, wanted_tags, caller)
        except IntegrityError:  # made meanwhile by another request
            existing = Queue.objects.get(cluster=cluster(), topic=name)
    if existing is not None:
        sqs = SqsQueue.objects.get_or_create(queue=existing)[0]
        queue_attributes.check_same(existing, sqs, attributes)
    return {"QueueUrl": caller.queue_url(name)}


def _create(
    name: str, attributes: dict[str, str], wanted_tags: dict[str, str], caller: Caller
) -> None:
    if audit.done_within("sqs.DeleteQueue", name, DELETED_RECENTLY):
        raise SqsError(
            "QueueDeletedRecently",
            "You must wait 60 seconds after deleting a queue before you can create "
            "another with the same name.",
            code="AWS.SimpleQueueService.QueueDeletedRecently",
        )
    queue = Queue(cluster=cluster(), topic=name, group_id=f"{name}-workers", delayed_sends=True)
    sqs = SqsQueue(created_by_sqs=True, tags=wanted_tags)
    queue_attributes.apply(queue, sqs, attributes)
    after = {"attributes": attributes, "tags": wanted_tags, "key": caller.key_id}
    with audit.action(caller.user, "sqs.CreateQueue", name, after=after) as entry:
        with transaction.atomic():
            queue.save()
            sqs.queue = queue
            sqs.save()
        entry.after = {**after, "topics created": queue.config().ensure_topics(queue.partitions)}


def get_queue_url(params: Params, caller: Caller) -> dict[str, Any]:
    name = text(params, "QueueName")
    if not Queue.objects.filter(cluster=cluster(), topic=name).exists():
        raise queue_does_not_exist()
    return {"QueueUrl": caller.queue_url(name)}


def list_queues(params: Params, caller: Caller) -> dict[str, Any]:
    """By name; with MaxResults, a page and the NextToken of the next (the
    last name given, so a queue made meanwhile is never skipped)."""
    prefix = text(params, "QueueNamePrefix", required=False) or ""
    limit = integer(params, "MaxResults", 1, 1000)
    after = text(params, "NextToken", required=False) or ""
    names = Queue.objects.filter(cluster=cluster(), topic__startswith=prefix, topic__gt=after)
    names = names.order_by("topic").values_list("topic", flat=True)
    page = list(names[: limit + 1] if limit else names)
    result: dict[str, Any] = {}
    if limit and len(page) > limit:
        page = page[:limit]
        result["NextToken"] = page[-1]
    if page:
        result["QueueUrls"] = [caller.queue_url(n) for n in page]
    return result


def delete_queue(params: Params, caller: Caller) -> dict[str, Any]:
    """Unregistered; its topics deleted too when SQS made it. A queue
    registered in the console keeps its topics (and their records)."""
    queue, sqs = lookup(params, to_change=True)
    config, owned = queue.config(), sqs.created_by_sqs
    with audit.action(
        caller.user, "sqs.DeleteQueue", queue.topic, after={"key": caller.key_id}
    ) as entry:
        queue.delete()
        if owned:
            shared = set(
                Queue.objects.filter(cluster=queue.cluster).values_list("topic", flat=True)
            )
            doomed = [t for t in config.topics() if t not in shared]
            entry.after = {
                **entry.after,
                "topics deleted": delete_topics(
                    config.bootstrap_servers, doomed, extra=config.kafka_config
                ),
            }
    return {}


def list_dead_letter_source_queues(params: Params, caller: Caller) -> dict[str, Any]:
    queue, _ = lookup(params)
    return {"queueUrls": [caller.queue_url(name) for name in dead_letter_sources(queue)]}


def dead_letter_sources(queue: Queue) -> list[str]:
    """The queues whose dead letters go to ``queue``'s topic, by name."""
    return [
        q.topic
        for q in Queue.objects.filter(cluster=queue.cluster).exclude(pk=queue.pk).order_by("topic")
        if q.dlq_topic == queue.topic
    ]
