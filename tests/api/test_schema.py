"""Schemathesis: requests generated from the OpenAPI schema, valid and not,
against the real app, test database and broker. No input may yield a 500."""

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error

from kmqadmin.console.models import Cluster, Queue, ScheduleTopic
from kmqadmin.kafka.embedded import EmbeddedBroker
from tests.users import user_with

schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())

pytestmark = pytest.mark.django_db


@pytest.fixture
def token(kafka: EmbeddedBroker) -> str:
    """An operator's token, and a queue and schedules topic named "fuzz" so
    that generated requests reach Kafka too, not only 404s."""
    cluster = Cluster.objects.create(name="local", bootstrap_servers=kafka.bootstrap_servers)
    queue = Queue.objects.create(cluster=cluster, topic="fuzz", group_id="fuzz-workers")
    queue.config().ensure_topics(partitions=1)
    schedules = ScheduleTopic.objects.create(cluster=cluster, topic="fuzz", group_id="fuzz-s")
    schedules.config().ensure_topics(partitions=1)
    return Token.objects.create(user=user_with("operator")).key


@schema.parametrize()
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_no_request_gets_a_server_error(case, token: str) -> None:
    if "topic" in (case.path_parameters or {}):
        case.path_parameters["topic"] = "fuzz"
    case.call_and_validate(headers={"Authorization": f"Token {token}"}, checks=[not_a_server_error])
