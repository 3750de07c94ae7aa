"""Queue names as SQS clients give them: in a queue URL, a bare name, or an
ARN (a RedrivePolicy's deadLetterTargetArn, a move task's source)."""

import re

from django.conf import settings

from kmqadmin.sqs.protocol.errors import (
    SqsError,
    invalid_parameter_value,
    missing_parameter,
    queue_does_not_exist,
)

# SQS's rule for a new queue's name; queues registered in the console may
# have any topic name Kafka takes (dots too), and are named as they are.
NEW_NAME = re.compile(r"[A-Za-z0-9_-]{1,80}")
DEFAULT_REGION = "us-east-1"


def arn(name: str) -> str:
    region = settings.KMQ_SQS_REGION or DEFAULT_REGION
    return f"arn:aws:sqs:{region}:{settings.KMQ_SQS_ACCOUNT_ID}:{name}"


def from_url(url: object) -> str:
    """The queue a QueueUrl names: ``.../<account>/<name>`` or a bare name.
    Another account's queue does not exist here."""
    if not isinstance(url, str) or not url:
        raise missing_parameter("QueueUrl")
    parts = url.rstrip("/").split("/")
    if len(parts) > 1 and parts[-2] != settings.KMQ_SQS_ACCOUNT_ID:
        raise queue_does_not_exist()
    return parts[-1]


def from_arn(value: object, parameter: str) -> str:
    """The queue an ARN names, any region; another account's does not exist here."""
    parts = value.split(":") if isinstance(value, str) else []
    if len(parts) != 6 or parts[:3] != ["arn", "aws", "sqs"] or not parts[5]:
        raise invalid_parameter_value(
            f"Value {str(value)[:200]} for parameter {parameter} is invalid. "
            "Reason: it is no SQS queue ARN (arn:aws:sqs:<region>:<account>:<name>)."
        )
    if parts[4] != settings.KMQ_SQS_ACCOUNT_ID:
        raise queue_does_not_exist()
    return parts[5]


def check_new(name: object) -> str:
    """The name of a queue about to be made, as SQS allows it."""
    if not isinstance(name, str) or not name:
        raise missing_parameter("QueueName")
    if name.endswith(".fifo"):
        raise invalid_parameter_value(
            "FIFO queues are not offered: Kafka orders a partition, not a message group."
        )
    if not NEW_NAME.fullmatch(name):
        raise SqsError(
            "InvalidParameterValueException",
            "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
            code="InvalidParameterValue",
        )
    return name
