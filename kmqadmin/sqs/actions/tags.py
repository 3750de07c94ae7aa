"""A queue's tags: TagQueue, UntagQueue, ListQueueTags, and CreateQueue's
``tags``. Kept with the queue's SQS attributes (SqsQueue), with SQS's limits."""

from typing import Any

from kmqadmin.console.services.audit import trail as audit
from kmqadmin.sqs.auth.caller import Caller
from kmqadmin.sqs.protocol.errors import invalid_parameter_value, missing_parameter
from kmqadmin.sqs.protocol.params import Params, string_map, strings
from kmqadmin.sqs.registered import lookup

MAX_TAGS = 50
MAX_KEY = 128
MAX_VALUE = 256


def given(params: Params, name: str, queue: str) -> dict[str, str]:
    """The tags ``name`` gives for ``queue``, each within SQS's limits."""
    tags = string_map(params, name)
    for key, value in tags.items():
        if not 1 <= len(key) <= MAX_KEY or len(value) > MAX_VALUE:
            raise invalid_parameter_value(
                f"Tag keys must be 1 to {MAX_KEY} characters and values at most {MAX_VALUE}."
            )
    _check_count(tags, queue)
    return tags


def tag_queue(params: Params, caller: Caller) -> dict[str, Any]:
    queue, sqs = lookup(params, to_change=True)
    tags = given(params, "Tags", queue.topic)
    if not tags:
        raise missing_parameter("Tags")
    merged = {**sqs.tags, **tags}
    _check_count(merged, queue.topic)
    with audit.action(
        caller.user, "sqs.TagQueue", queue.topic, sqs.tags, {**tags, "key": caller.key_id}
    ):
        sqs.tags = merged
        sqs.save(update_fields=["tags", "updated_at"])
    return {}


def untag_queue(params: Params, caller: Caller) -> dict[str, Any]:
    queue, sqs = lookup(params, to_change=True)
    keys = strings(params, "TagKeys")
    if not keys or not all(1 <= len(k) <= MAX_KEY for k in keys):
        raise invalid_parameter_value(
            f"Tag keys must be between 1 and {MAX_KEY} characters in length."
        )
    after = {"removed": keys, "key": caller.key_id}
    with audit.action(caller.user, "sqs.UntagQueue", queue.topic, sqs.tags, after):
        sqs.tags = {k: v for k, v in sqs.tags.items() if k not in keys}
        sqs.save(update_fields=["tags", "updated_at"])
    return {}


def list_queue_tags(params: Params, caller: Caller) -> dict[str, Any]:
    _, sqs = lookup(params)
    return {"Tags": sqs.tags} if sqs.tags else {}


def _check_count(tags: dict[str, str], queue: str) -> None:
    if len(tags) > MAX_TAGS:
        raise invalid_parameter_value(f"Too many tags added for queue {queue}.")
