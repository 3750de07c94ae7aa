"""/api/v1/ is the API; the paths from before versioning answer the same,
saying they are deprecated and where the successor is; the schema
documents /api/v1/ alone, with ?cluster= on every registered-topic path."""

import pytest
from rest_framework.test import APIClient

from kmqadmin.console.models import Queue
from kmqadmin.kmq import QueueConfig
from tests.api.conftest import client_as

pytestmark = pytest.mark.django_db


def test_an_unversioned_path_answers_the_same_and_says_it_is_deprecated(
    queue: QueueConfig, operator: APIClient
) -> None:
    current = operator.get(f"/api/v1/queues/{queue.topic}/stats")
    old = operator.get(f"/api/queues/{queue.topic}/stats")
    assert current.status_code == old.status_code == 200
    assert current.json().keys() == old.json().keys()
    assert "Deprecation" not in current.headers
    assert old.headers["Deprecation"].startswith("@")
    assert old.headers["Link"] == f'</api/v1/queues/{queue.topic}/stats>; rel="successor-version"'

    # Errors too, and writes: a client still on the old paths sees it on every answer.
    missing = operator.post("/api/queues/no-such-queue/messages/", {"value": "v"})
    assert missing.status_code == 404 and missing.headers["Deprecation"].startswith("@")


def test_the_schema_documents_v1_and_the_cluster_parameter(registered: Queue) -> None:
    document = client_as("viewer").get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    paths = document["paths"]
    assert paths and all(path.startswith("/api/v1/") for path in paths)
    on_a_topic = [
        (path, method, operation)
        for path, operations in paths.items()
        if path.startswith(("/api/v1/queues/{topic}", "/api/v1/schedules/{topic}"))
        for method, operation in operations.items()
    ]
    assert len(on_a_topic) > 10
    for path, method, operation in on_a_topic:
        query = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
        assert "cluster" in query, (method, path)
