"""The audit log through the API: the console's filters, and until, on the
real database; newest first, paged by id; a bad filter is a 400 naming it."""

from datetime import datetime

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.test import APIClient

from kmqadmin.console.models import AuditEntry
from kmqadmin.console.services.audit import trail as audit
from tests.api.conftest import client_as
from tests.users import user_with

pytestmark = pytest.mark.django_db
URL = "/api/v1/audit/"


@pytest.fixture
def entries() -> tuple[list[AuditEntry], datetime]:
    """Five entries by two people, and a time between the second and the
    third (the log is append-only: no entry can be dated back). The people
    and the viewer reading are made first: their roles are audited too."""
    ann, bob = user_with("operator", "ann"), user_with("admin", "bob")
    user_with("viewer")
    written = [
        audit.record(ann, "ack", "orders"),
        audit.record(bob, "register queue", "orders", after={"max_redeliveries": "3"}),
    ]
    while (between := timezone.now()) <= written[-1].at:
        pass  # the clock's next tick
    written += [
        audit.record(ann, "ack", "payments", error="KafkaException: gone"),
        audit.record(bob, "cancel schedule", "payments-schedules", before={"id": "s"}),
        audit.record(ann, "sqs.DeleteMessageBatch", "orders", after={"key": "AKID"}),
    ]
    return written, between


def reader() -> APIClient:
    """The viewer the ``entries`` fixture made before writing them."""
    client = APIClient()
    client.force_authenticate(User.objects.get(username="viewer"))
    return client


def ids(answer: dict) -> list[int]:
    return [row["id"] for row in answer["results"]]


def test_filters_as_the_console_has_them_and_until(
    entries: tuple[list[AuditEntry], datetime],
) -> None:
    viewer = reader()
    written, between = entries
    ack_ann, registered, ack_failed, cancelled, deleted = (e.pk for e in written)

    assert ids(viewer.get(URL).json())[:5] == [deleted, cancelled, ack_failed, registered, ack_ann]
    assert ids(viewer.get(URL, {"user": "ann"}).json()) == [deleted, ack_failed, ack_ann]
    assert ids(viewer.get(URL, {"action": "ack"}).json()) == [ack_failed, ack_ann]
    assert ids(viewer.get(URL, {"target": "payments"}).json()) == [cancelled, ack_failed]
    assert ids(viewer.get(URL, {"since": between.isoformat()}).json()) == [
        deleted,
        cancelled,
        ack_failed,
    ]
    assert ids(viewer.get(URL, {"until": between.isoformat()}).json())[:2] == [registered, ack_ann]

    [failed] = viewer.get(URL, {"target": "payments", "action": "ack"}).json()["results"]
    assert failed["user"] == "ann" and failed["status"] == "failed"
    assert failed["error"] == "KafkaException: gone"


def test_pages_by_id_newest_first(entries: tuple[list[AuditEntry], datetime]) -> None:
    viewer = reader()
    seen, query = [], {"limit": 2}
    while True:
        page = viewer.get(URL, query).json()
        seen += ids(page)
        if page["next"] is None:
            break
        query = {"limit": 2, "after": page["next"]}
    assert seen == list(AuditEntry.objects.order_by("-id").values_list("id", flat=True))
    assert {e.pk for e in entries[0]} <= set(seen)


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"since": "yesterday"}, "since"),
        ({"until": "2026-13-01"}, "until"),
        ({"since": "2026-01-02T00:00:00Z", "until": "2026-01-01T00:00:00Z"}, "until"),
        ({"after": "x"}, "after"),
        ({"after": str(2**64)}, "after"),
        ({"after": "0"}, "after"),
        ({"limit": "0"}, "limit"),
        ({"user": "a\x00b"}, "user"),
    ],
)
def test_a_bad_filter_is_a_400_naming_it(query: dict, field: str) -> None:
    answer = client_as("viewer").get(URL, query)
    assert answer.status_code == 400, answer.content
    assert field in answer.json()


def test_reading_needs_a_role() -> None:
    assert client_as(None).get(URL).status_code == 401
    assert client_as("viewer").post(URL, {}).status_code == 403
