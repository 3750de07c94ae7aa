"""The SQS actions this endpoint answers, each with the role it needs.

An action takes the request's parameters and who asks (Caller) and returns
the result object SQS's model names. What SQS has and we do not offer gets
UnsupportedOperation; a name SQS does not have, InvalidAction.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser

from kmqadmin.console.models import Queue
from kmqadmin.console.services.roles import Role

from .errors import SqsError, invalid_parameter_value, unsupported_operation


@dataclass(frozen=True, slots=True)
class Caller:
    user: AbstractBaseUser
    role: Role
    base_url: str  # http(s)://host/sqs, as the client reached us

    def queue_url(self, name: str) -> str:
        return f"{self.base_url}/{settings.KMQ_SQS_ACCOUNT_ID}/{name}"


Action = Callable[[dict[str, Any], Caller], Awaitable[dict[str, Any]]]


async def list_queues(params: dict[str, Any], caller: Caller) -> dict[str, Any]:
    prefix = params.get("QueueNamePrefix") or ""
    if not isinstance(prefix, str):
        raise invalid_parameter_value("QueueNamePrefix must be a string.")
    names = await sync_to_async(_queue_names)(prefix)
    return {"QueueUrls": [caller.queue_url(n) for n in names]} if names else {}


def _queue_names(prefix: str) -> list[str]:
    return list(
        Queue.objects.filter(topic__startswith=prefix)
        .order_by("topic")
        .values_list("topic", flat=True)
    )


ACTIONS: dict[str, tuple[Role, Action]] = {
    "ListQueues": (Role.VIEWER, list_queues),
}
# SQS's other actions: each answered UnsupportedOperation until it is built.
SQS_ACTIONS = {
    "AddPermission", "CancelMessageMoveTask", "ChangeMessageVisibility",
    "ChangeMessageVisibilityBatch", "CreateQueue", "DeleteMessage", "DeleteMessageBatch",
    "DeleteQueue", "GetQueueAttributes", "GetQueueUrl", "ListDeadLetterSourceQueues",
    "ListMessageMoveTasks", "ListQueueTags", "PurgeQueue", "ReceiveMessage", "RemovePermission",
    "SendMessage", "SendMessageBatch", "SetQueueAttributes", "StartMessageMoveTask", "TagQueue",
    "UntagQueue",
}  # fmt: skip


def action_for(name: str, caller: Caller) -> Action:
    """The action ``name``, if the caller's role allows it."""
    if name not in ACTIONS:
        if name in SQS_ACTIONS:
            raise unsupported_operation(name)
        raise SqsError("InvalidAction", f"The action {name[:100]} is not valid for this endpoint.")
    role, action = ACTIONS[name]
    if caller.role < role:
        raise SqsError(
            "AccessDenied",
            f"{name} needs the {role.name.lower()} role; this key's user is "
            f"{caller.role.name.lower()}.",
            status=403,
        )
    return action
