"""The SQS actions this endpoint answers, each with the role it needs.

An action takes the request's parameters (in the JSON protocol's shape)
and who asks (Caller), and returns the result object SQS's model names; it
runs in a worker thread, as it talks to the database and Kafka. What SQS
has and we do not offer gets UnsupportedOperation; a name SQS does not
have, InvalidAction.
"""

from collections.abc import Callable
from typing import Any

from kmqadmin.console.services.roles import Role

from . import queue_attributes, queues, tags
from .caller import Caller
from .errors import access_denied, invalid_action, unsupported_operation
from .params import Params

Action = Callable[[Params, Caller], dict[str, Any]]

ACTIONS: dict[str, tuple[Role, Action]] = {
    "ListQueues": (Role.VIEWER, queues.list_queues),
    "GetQueueUrl": (Role.VIEWER, queues.get_queue_url),
    "CreateQueue": (Role.VIEWER, queues.create_queue),  # a new one needs admin
    "DeleteQueue": (Role.ADMIN, queues.delete_queue),
    "ListDeadLetterSourceQueues": (Role.VIEWER, queues.list_dead_letter_source_queues),
    "GetQueueAttributes": (Role.VIEWER, queue_attributes.get_queue_attributes),
    "SetQueueAttributes": (Role.ADMIN, queue_attributes.set_queue_attributes),
    "TagQueue": (Role.ADMIN, tags.tag_queue),
    "UntagQueue": (Role.ADMIN, tags.untag_queue),
    "ListQueueTags": (Role.VIEWER, tags.list_queue_tags),
}
# SQS's other actions: each answered UnsupportedOperation until it is built.
SQS_ACTIONS = {
    "AddPermission", "CancelMessageMoveTask", "ChangeMessageVisibility",
    "ChangeMessageVisibilityBatch", "DeleteMessage", "DeleteMessageBatch",
    "ListMessageMoveTasks", "PurgeQueue", "ReceiveMessage", "RemovePermission",
    "SendMessage", "SendMessageBatch", "StartMessageMoveTask",
}  # fmt: skip


def action_for(name: str, caller: Caller) -> Action:
    """The action ``name``, if the caller's role allows it."""
    if name not in ACTIONS:
        if name in SQS_ACTIONS:
            raise unsupported_operation(name)
        raise invalid_action(name[:100])
    role, action = ACTIONS[name]
    if caller.role < role:
        raise access_denied(name, role, caller)
    return action
