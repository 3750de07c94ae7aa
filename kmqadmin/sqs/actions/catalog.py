"""The SQS actions this endpoint answers, each with the role it needs.

An action takes the request's parameters (in the JSON protocol's shape)
and who asks (Caller), and returns the result object SQS's model names. What SQS
has and we do not offer gets UnsupportedOperation; a name SQS does not
have, InvalidAction.
"""

from collections.abc import Awaitable, Callable
from typing import Any

from kmqadmin.console.services.roles import Role
from kmqadmin.sqs.actions import (
    deliveries,
    move_tasks,
    purge,
    queue_attributes,
    queues,
    receive,
    send,
    tags,
)
from kmqadmin.sqs.auth.caller import Caller
from kmqadmin.sqs.protocol.errors import access_denied, invalid_action, unsupported_operation
from kmqadmin.sqs.protocol.params import Params

# An action runs in a pool thread (the database, Kafka); one that waits
# (ReceiveMessage's long poll) returns an awaitable the event loop awaits.
Action = Callable[[Params, Caller], dict[str, Any] | Awaitable[dict[str, Any]]]

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
    "SendMessage": (Role.OPERATOR, send.send_message),
    "SendMessageBatch": (Role.OPERATOR, send.send_message_batch),
    "ReceiveMessage": (Role.OPERATOR, receive.receive_message),
    "DeleteMessage": (Role.OPERATOR, deliveries.delete_message),
    "DeleteMessageBatch": (Role.OPERATOR, deliveries.delete_message_batch),
    "ChangeMessageVisibility": (Role.OPERATOR, deliveries.change_message_visibility),
    "ChangeMessageVisibilityBatch": (Role.OPERATOR, deliveries.change_message_visibility_batch),
    "PurgeQueue": (Role.ADMIN, purge.purge_queue),
    "StartMessageMoveTask": (Role.OPERATOR, move_tasks.start_message_move_task),
    "ListMessageMoveTasks": (Role.VIEWER, move_tasks.list_message_move_tasks),
    "CancelMessageMoveTask": (Role.OPERATOR, move_tasks.cancel_message_move_task),
}
# SQS's other actions: each answered UnsupportedOperation until it is built.
SQS_ACTIONS = {"AddPermission", "RemovePermission"}


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
