"""Errors the API answers with a reason rather than a 500.

A bad request is DRF's 4xx already; what is left are the cluster's own
states: Kafka unreachable or slow (503, try again), a write Kafka did not
report on in time (504, outcome unknown), a retry whose Idempotency-Key's
first send has no outcome yet (409) or was another message (422), a
registered queue whose
topics are missing (409, create them: `kmq doctor` says how), and an action
whose target is not what the request says it is, a backend switch while
messages are in flight or a group reset while consumers are connected
(409, nothing done); a reset to what the cluster does not have (400).
"""

from confluent_kafka import KafkaException
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_handler

from kmqadmin.console.services.clusters.availability import RETRY_AFTER_S
from kmqadmin.console.services.clusters.registered import Ambiguous
from kmqadmin.console.services.conflict import Conflict
from kmqadmin.console.services.missing import Missing
from kmqadmin.console.services.queues.backend_switch import SwitchRefused
from kmqadmin.console.services.queues.sent_once import FirstStillOpen, KeyReused
from kmqadmin.console.services.schedules import TargetNotAllowed
from kmqadmin.kafka.admin.groups import GroupNotEmpty, GroupNotFound
from kmqadmin.kafka.admin.offset_reader import ReadTimeout
from kmqadmin.kafka.admin.offset_reset import BadReset
from kmqadmin.kafka.client.checked_producer import OutcomeUnknown
from kmqadmin.kafka.client.errors import KafkaSetupError, TopicMissing


def exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, OutcomeUnknown):  # not "not delivered": an unkeyed retry may double it
        detail = f"outcome unknown: {exc}"
        return Response({"detail": detail}, status=status.HTTP_504_GATEWAY_TIMEOUT)
    if isinstance(exc, KafkaException | ReadTimeout):
        return _unavailable(f"Kafka did not answer in time: {exc}; try again")
    if isinstance(exc, KeyReused):
        return Response({"detail": str(exc)}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
    if isinstance(exc, FirstStillOpen):
        body, headers = {"detail": str(exc)}, {"Retry-After": str(RETRY_AFTER_S)}
        return Response(body, status=status.HTTP_409_CONFLICT, headers=headers)
    if isinstance(exc, Missing | GroupNotFound):
        return Response({"detail": str(exc)}, status=status.HTTP_404_NOT_FOUND)
    if isinstance(exc, TargetNotAllowed):
        return Response({"target_topic": [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, BadReset):
        return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, Ambiguous):
        body = {"detail": str(exc), "clusters": exc.clusters}
        return Response(body, status=status.HTTP_300_MULTIPLE_CHOICES)
    if isinstance(exc, TopicMissing | Conflict | SwitchRefused | GroupNotEmpty):
        return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, KafkaSetupError):  # Kafka away, or a cluster's settings: the message says
        return _unavailable(str(exc))
    return drf_handler(exc, context)


def _unavailable(detail: str) -> Response:
    return Response(
        {"detail": detail},
        status=status.HTTP_503_SERVICE_UNAVAILABLE,
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )
