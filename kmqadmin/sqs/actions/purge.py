"""PurgeQueue: Kafka cannot delete a record in place, but it can move a
log's first offset (DeleteRecords). Purging moves the queue topic's to its
end: workers, SQS receivers and Kafka consumers alike start from there, and
the tracker skips an in-flight message that is no longer in the topic when
it falls due (kmq/tracking/redeliverer.py, "gone"), and a client skips records it
fetched before the purge once a fetch reply gives it the new first offset
(QueueClient._log_start). So a purged message is never received again, in
flight or not, as in SQS. On a share-group queue, what a consumer acquired
before the purge may still be handed out once: a share fetch reply does not
carry the log's first offset.

Not purged: messages sent with DelaySeconds still waiting in the queue's
scheduler (they come onto the queue when due), and the dead-letter queue,
a queue of its own. As SQS does, a queue is purged at most once a minute.
"""

from datetime import timedelta
from typing import Any

from kmqadmin.console.services.audit import trail as audit
from kmqadmin.kafka.admin.log_offsets import LogAdmin
from kmqadmin.sqs.auth.caller import Caller
from kmqadmin.sqs.protocol.errors import SqsError
from kmqadmin.sqs.protocol.params import Params
from kmqadmin.sqs.registered import lookup

ACTION = "sqs.PurgeQueue"
ONCE_IN = timedelta(seconds=60)


def purge_queue(params: Params, caller: Caller) -> dict[str, Any]:
    queue, _ = lookup(params)
    if audit.done_within(ACTION, queue.topic, ONCE_IN):
        raise SqsError(
            "PurgeQueueInProgress",
            f"Only one PurgeQueue operation on {queue.topic} is allowed every 60 seconds.",
            code="AWS.SimpleQueueService.PurgeQueueInProgress",
            status=403,
        )
    config = queue.config()
    with audit.action(caller.user, ACTION, queue.topic, after={"key": caller.key_id}) as entry:
        logs = LogAdmin(config.bootstrap_servers, config.kafka_config).logs
        starts = logs.delete_before(logs.latest(logs.partitions(queue.topic)))
        entry.after = {
            "key": caller.key_id,
            "first offsets": {p: o for (_, p), o in starts.items()},
        }
    return {}
