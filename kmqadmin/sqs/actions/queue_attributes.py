"""A queue's SQS attributes, read from and written to its registration:
GetQueueAttributes, SetQueueAttributes, and the attributes of CreateQueue.

VisibilityTimeout is the queue's message timeout; a RedrivePolicy's
maxReceiveCount is its max redeliveries + 1 and its deadLetterTargetArn its
DLQ topic (any queue's, so an SQS DLQ made with CreateQueue works, or the
queue's own ``__undelivered`` topic). A kmqadmin queue always dead-letters,
so it always has a RedrivePolicy (an empty one given puts back the defaults).
The counts come from what the dashboard
shows (queue_stats): offsets and the in-flight view, no topic read.
"""

import json
import re
from typing import Any

from django.core.exceptions import ValidationError
from django.utils.dateformat import format as date_format

from kmqadmin.console.models import Queue, SqsQueue
from kmqadmin.console.services.audit import trail as audit
from kmqadmin.console.services.clusters import clients
from kmqadmin.console.services.queues.broker_bounds import check_share_bounds
from kmqadmin.console.services.queues.stats import queue_stats
from kmqadmin.kafka.client.clock import to_ms, to_s
from kmqadmin.kmq import QueueConfig, names
from kmqadmin.sqs import queue_names
from kmqadmin.sqs.auth.caller import Caller
from kmqadmin.sqs.protocol.errors import SqsError, invalid_parameter_value
from kmqadmin.sqs.protocol.params import MAX_VISIBILITY_S, Params, string_map, strings
from kmqadmin.sqs.registered import lookup

# Settable, with SQS's bounds, onto SqsQueue's fields.
KEPT = {
    "DelaySeconds": ("delay_seconds", 0, 900),
    "MaximumMessageSize": ("maximum_message_size", 1024, 1_048_576),
    "MessageRetentionPeriod": ("message_retention_period", 60, 1_209_600),
    "ReceiveMessageWaitTimeSeconds": ("receive_message_wait_time_seconds", 0, 20),
}
SETTABLE = {*KEPT, "VisibilityTimeout", "RedrivePolicy", "FifoQueue", "SqsManagedSseEnabled"}
# SQS's other attributes: none is ever set here (an access policy or a KMS key
# that had no effect would mislead), so giving one is refused with that
# reason, giving it empty changes nothing, and reading one answers nothing.
NOT_OFFERED = {
    "Policy",
    "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds",
    "RedriveAllowPolicy",
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
}
COUNTS = {
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
}
READABLE = {*SETTABLE, *COUNTS, "QueueArn", "CreatedTimestamp", "LastModifiedTimestamp"}
WHOLE = re.compile(r"[0-9]{1,10}")  # not isdigit(): it takes "²", which int() refuses
MAX_RECEIVE_COUNT = 1000
DELAYED_READ_S = 3.0
# The model's fields each attribute sets, to name it in a refusal.
FIELDS = {"message_timeout_ms": "VisibilityTimeout", "max_redeliveries": "RedrivePolicy"}


def given(params: Params) -> dict[str, str]:
    """The Attributes of a request, each one SQS lets a client set."""
    attributes = string_map(params, "Attributes")
    for name, value in attributes.items():
        if name in NOT_OFFERED and value:
            raise _invalid(name, value, "not offered by this endpoint")
        if name not in SETTABLE | NOT_OFFERED:
            raise _unknown(name)
    return {name: value for name, value in attributes.items() if name not in NOT_OFFERED}


def apply(queue: Queue, sqs: SqsQueue, attributes: dict[str, str]) -> None:
    """Set on the (unsaved) registration, then checked as the console checks it."""
    for name, value in attributes.items():
        if name in KEPT:
            field, low, high = KEPT[name]
            setattr(sqs, field, _number(name, value, low, high))
        elif name == "VisibilityTimeout":  # 0 is SQS's too, but the tracker needs a timeout
            queue.message_timeout_ms = to_ms(_number(name, value, 1, MAX_VISIBILITY_S))
        elif name == "RedrivePolicy":
            _redrive(queue, value)
        elif value.lower() != "false":  # FifoQueue, SqsManagedSseEnabled
            raise _invalid(name, value, "not offered by this endpoint")
    try:
        queue.full_clean(validate_unique=False)
        check_share_bounds(queue)
    except ValidationError as exc:
        fields = exc.message_dict if hasattr(exc, "error_dict") else {"": exc.messages}
        field, problems = next(iter(fields.items()))
        raise _invalid(FIELDS.get(field, field or "Attributes"), "", "; ".join(problems)) from None


def check_same(queue: Queue, sqs: SqsQueue, attributes: dict[str, str]) -> None:
    """CreateQueue of an existing queue: its URL only if nothing asked differs."""
    now = current(queue, sqs, set(attributes) - COUNTS)
    for name, value in attributes.items():
        same = _policy(value) == _policy(now.get(name, "")) if name == "RedrivePolicy" else None
        if not (same if same is not None else value.lower() == now.get(name, "false").lower()):
            raise SqsError(
                "QueueNameExists",
                f"A queue already exists with the same name and a different value for "
                f"attribute {name}",
                code="QueueAlreadyExists",
            )


def current(queue: Queue, sqs: SqsQueue, wanted: set[str]) -> dict[str, str]:
    values = {
        "QueueArn": queue_names.arn(queue.topic),
        "VisibilityTimeout": str(int(to_s(queue.message_timeout_ms))),
        "RedrivePolicy": json.dumps(
            {
                "deadLetterTargetArn": queue_names.arn(queue.dlq_topic),
                "maxReceiveCount": queue.max_redeliveries + 1,
            },
            separators=(",", ":"),
        ),
        "SqsManagedSseEnabled": "false",
        "CreatedTimestamp": date_format(sqs.created_at, "U"),
        "LastModifiedTimestamp": date_format(sqs.updated_at, "U"),
        **{name: str(getattr(sqs, field)) for name, (field, _, _) in KEPT.items()},
    }
    if wanted & COUNTS:
        values.update(_counts(queue))
    return {name: value for name, value in values.items() if name in wanted}


def get_queue_attributes(params: Params, caller: Caller) -> dict[str, Any]:
    queue, sqs = lookup(params)
    asked = set(strings(params, "AttributeNames"))
    for name in asked - READABLE - NOT_OFFERED - {"All"}:
        raise _unknown(name)
    values = current(queue, sqs, READABLE if "All" in asked else asked)
    return {"Attributes": values} if values else {}


def set_queue_attributes(params: Params, caller: Caller) -> dict[str, Any]:
    queue, sqs = lookup(params, to_change=True)
    attributes = given(params)
    before = current(queue, sqs, set(attributes))
    after = {**attributes, "key": caller.key_id}
    with audit.action(caller.user, "sqs.SetQueueAttributes", queue.topic, before, after):
        apply(queue, sqs, attributes)
        queue.save()
        sqs.save()
        queue.config().ensure_topics(queue.partitions)  # a new DLQ topic, say
    return {}


def _counts(queue: Queue) -> dict[str, str]:
    """The dashboard's figures; the delayed ones are the queue scheduler's
    live schedules (DelaySeconds, delayed retries), as its page lists them."""
    stats = queue_stats(queue)
    held = stats.in_flight if stats.in_flight is not None else stats.share_held
    config = queue.config()
    return {
        "ApproximateNumberOfMessages": str(stats.depth),
        "ApproximateNumberOfMessagesNotVisible": str(held or 0),
        "ApproximateNumberOfMessagesDelayed": str(_delayed(config) if config.has_scheduler else 0),
    }


def _delayed(config: QueueConfig) -> int:
    """A view read for the first time gets more than a page's half second:
    a count of what it has not read yet would be 0, not approximate."""
    view = clients.upcoming(config.scheduler_config())
    if not view.complete:
        view.refresh(budget_s=DELAYED_READ_S)
    return view.count()


def _redrive(queue: Queue, value: str) -> None:
    """An empty policy, which removes SQS's, puts back the defaults: the
    queue's own DLQ topic after the default redeliveries."""
    if value == "":
        queue.dlq_topic_override = ""
        queue.max_redeliveries = Queue._meta.get_field("max_redeliveries").get_default()
        return
    policy = _policy(value)
    if policy is None:
        raise _invalid(
            "RedrivePolicy", value, "a JSON object with deadLetterTargetArn and maxReceiveCount"
        )
    count = policy.get("maxReceiveCount")  # a number, or a string of one (_policy)
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_RECEIVE_COUNT:
        raise _invalid("RedrivePolicy", value, f"maxReceiveCount must be 1 to {MAX_RECEIVE_COUNT}")
    target = queue_names.from_arn(policy.get("deadLetterTargetArn"), "RedrivePolicy")
    if target == queue.topic:
        raise _invalid("RedrivePolicy", value, "a queue cannot be its own dead-letter queue")
    own = target == names.dlq_topic(queue.topic)
    if not own and not Queue.objects.filter(cluster=queue.cluster, topic=target).exists():
        raise invalid_parameter_value(
            f"Value {value[:300]} for parameter RedrivePolicy is invalid. "
            "Reason: Dead-letter target does not exist."
        )
    queue.max_redeliveries = count - 1
    queue.dlq_topic_override = "" if own else target


def _policy(value: str) -> dict | None:
    try:
        policy = json.loads(value)
    except (ValueError, RecursionError):
        return None
    if not isinstance(policy, dict):
        return None
    count = policy.get("maxReceiveCount")
    if isinstance(count, str) and WHOLE.fullmatch(count):
        policy["maxReceiveCount"] = int(count)
    return policy


def _number(name: str, value: str, low: int, high: int) -> int:
    if not WHOLE.fullmatch(value) or not low <= int(value) <= high:
        raise _invalid(name, value, f"must be a whole number from {low} to {high}")
    return int(value)


def _unknown(name: str) -> SqsError:
    return SqsError("InvalidAttributeName", f"Unknown Attribute {name[:100]}.")


def _invalid(name: str, value: str, reason: str) -> SqsError:
    return SqsError(
        "InvalidAttributeValue",
        f"Invalid value for the parameter {name}. Reason: {reason}.",
    )
