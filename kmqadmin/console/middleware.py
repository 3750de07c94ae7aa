"""Kafka's own states, and a topic registered on several clusters, as pages
that say what happened, not a bare 500."""

from collections.abc import Callable
from urllib.parse import urlencode

from confluent_kafka import KafkaException
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from kmqadmin.console.services.clusters.availability import RETRY_AFTER_S
from kmqadmin.console.services.clusters.registered import CLUSTER, Ambiguous
from kmqadmin.kafka.admin.offset_reader import ReadTimeout
from kmqadmin.kafka.client.checked_producer import OutcomeUnknown
from kmqadmin.kafka.client.errors import KafkaSetupError, TopicMissing


class KafkaErrorMiddleware:
    """Kafka away or slow: 503 with Retry-After, try again; a write Kafka did
    not report on in time: 504, outcome unknown; a registered queue's topic
    missing: 409 naming it (the queue page has a button to create it); a
    topic registered on several clusters: 300 with a link to each. The API
    answers the same in JSON (api/errors.py)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if isinstance(exc, Ambiguous):
            links = [f"{request.path}?{urlencode({CLUSTER: name})}" for name in exc.clusters]
            context = {"what": str(exc), "choices": zip(exc.clusters, links, strict=True)}
            return render(request, "console/ambiguous.html", context, status=300)
        if isinstance(exc, OutcomeUnknown):
            status, what = 504, f"Outcome unknown: {exc}; the audit log says once Kafka does"
        elif isinstance(exc, TopicMissing):
            status, what = 409, str(exc)
        elif isinstance(exc, KafkaSetupError):  # a cluster's settings: the message names them
            status, what = 503, str(exc)
        elif isinstance(exc, KafkaException | ReadTimeout):
            status, what = 503, f"Kafka did not answer in time: {exc}; try again"
        else:
            return None
        response = render(request, "console/kafka_error.html", {"what": what}, status=status)
        if status == 503:
            response["Retry-After"] = str(RETRY_AFTER_S)
        return response
