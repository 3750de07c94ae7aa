"""Schemathesis in stateful mode over the REST API: sequences of calls where
each list's results feed the next call (a schedule listed is read, edited,
fired, cancelled; a letter listed is redriven; a message in flight is acted
on), with header names in the generated bodies as hostile as JSON can
carry. No answer may be a 500, and the web process must outlive the run.

Each scenario gets a queue and a schedules topic of its own, and no service
changes them behind its back: hypothesis replays the start of one scenario
to build the next, and a replay that sees other answers (a schedule fired
meanwhile, a message taken by a worker) is reported as a flaky strategy
instead of testing anything. The services' side of hostile records is
test_records.py's.
"""

import copy
import uuid
from collections import Counter
from typing import Any

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error

from kmqadmin.console.models import Cluster, Queue, ScheduleTopic
from kmqadmin.console.services.clusters import clients
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from tests.chaos import report
from tests.fuzz.profile import FUZZ
from tests.users import user_with

pytestmark = pytest.mark.django_db


# Header names as a careless client sends them: lone surrogates (not UTF-8
# encodable), NUL and control characters, kmqadmin's own prefixes, long ones.
# Schemathesis draws an object's keys from its own alphabet (UTF-8 text), so
# these are added to each generated body's headers by a hook.
hostile_header_names = st.one_of(
    st.text(st.characters(codec=None), max_size=8),  # surrogates included
    st.sampled_from(["", "\x00", "a\nb", "\ud800", "kmq-id", "scheduler-epoch"]),
    st.text(min_size=300, max_size=400),
)

# (source operation, status) -> links to targets, with the parameters they take.
_SCHEDULE = {"topic": "$request.path.topic", "schedule_id": "$response.body#/results/0/id"}
_LINKS = {
    # A scenario's schedules topic has its queue's name: the queue list leads there too.
    ("queues_list", "200"): {
        "schedules_list": {"topic": "$response.body#/0/topic"},
        "schedules_create": {"topic": "$response.body#/0/topic"},
    },
    ("schedules_list", "200"): {
        "schedules_retrieve": _SCHEDULE,
        "schedules_update": _SCHEDULE,
        "schedules_destroy": _SCHEDULE,
        "schedules_fire_create": _SCHEDULE,
    },
    ("queues_in_flight_retrieve", "200"): {
        "queues_message_action": {
            "topic": "$request.path.topic",
            "message_id": "$response.body#/results/0/id",
        }
    },
    ("queues_dlq_retrieve", "200"): {
        "queues_dlq_redrive": {
            "topic": "$request.path.topic",
            "partition": "$response.body#/results/0/partition",
            "offset": "$response.body#/results/0/offset",
        }
    },
    ("queues_dlq_bulk_redrive", "202"): {"tasks_retrieve": {"task_id": "$response.body#/task"}},
}


def fuzzing_schema() -> schemathesis.schemas.BaseSchema:
    """The app's own schema with the links above, and hostile header names in
    its bodies: what the app documents is unchanged (headers is an object of
    strings with any keys); the generator is only pointed harder at it."""
    app = get_wsgi_application()
    raw = copy.deepcopy(schemathesis.openapi.from_wsgi("/api/v1/schema/", app).raw_schema)
    operations = {op["operationId"]: op for ops in raw["paths"].values() for op in ops.values()}
    for (source, status), targets in _LINKS.items():
        links = operations[source]["responses"][status].setdefault("links", {})
        for target, parameters in targets.items():
            links[target] = {"operationId": target, "parameters": parameters}
    schema = schemathesis.openapi.from_dict(raw)
    schema.app = app
    schema.hook(flatmap_body)
    return schema


def flatmap_body(context: Any, body: Any) -> st.SearchStrategy:
    """A body with headers gets a few hostile names added to them."""
    if not (isinstance(body, dict) and isinstance(body.get("headers"), dict)):
        return st.just(body)
    added = st.dictionaries(hostile_header_names, st.text(max_size=8), min_size=1, max_size=3)
    return added.map(lambda names: body | {"headers": body["headers"] | names})


schema = fuzzing_schema()


@pytest.fixture
def cluster(kafka: EmbeddedBroker) -> Cluster:
    return Cluster.objects.create(name="local", bootstrap_servers=kafka.bootstrap_servers)


def register(cluster: Cluster) -> str:
    """A new queue and a schedules topic of the same name, so that any generated
    call with a {topic} reaches Kafka rather than a 404."""
    topic = f"fz-api-{uuid.uuid4().hex[:10]}"
    queue = Queue.objects.create(cluster=cluster, topic=topic, group_id=topic, partitions=1)
    queue.config().ensure_topics(partitions=1)
    schedules = ScheduleTopic.objects.create(
        cluster=cluster, topic=topic, group_id=topic, partitions=1
    )
    schedules.config().ensure_topics(partitions=1)
    return topic


def test_call_sequences_get_no_server_error(cluster: Cluster) -> None:
    token = Token.objects.create(user=user_with("operator")).key
    calls: Counter[str] = Counter()
    topics: list[str] = []

    class Workflow(schema.as_state_machine()):
        def setup(self) -> None:
            topics.append(register(cluster))

        def before_call(self, case: Any) -> None:
            if "topic" in (case.path_parameters or {}):
                case.path_parameters["topic"] = topics[-1]

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"headers": {"Authorization": f"Token {token}"}}

        def validate_response(self, response: Any, case: Any, **kwargs: Any) -> None:
            calls[f"{case.method} {case.path} {response.status_code // 100}xx"] += 1
            case.validate_response(response, checks=[not_a_server_error])

    try:
        Workflow.run(settings=settings(FUZZ, stateful_step_count=12))
    finally:
        for topic in topics:
            clients.close(topic)
        report("fuzz-api-stateful", scenarios=len(topics), calls=calls.total(), **calls)
