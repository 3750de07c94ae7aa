"""Audit entries read as field: before -> after, for every shape an entry stores."""

import re

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from kmqadmin.console.models import AuditEntry, Cluster, Queue
from kmqadmin.console.services.audit.diff import ABSENT, BLANK, Change, changes
from kmqadmin.console.services.queues import messages
from kmqadmin.kmq.draft import Draft
from tests.console.conftest import client_as
from tests.users import user_with

T = 1_764_237_600_000  # 2025-11-27 10:00:00 UTC


def test_fields_of_either_side_each_get_a_row_in_the_entrys_order() -> None:
    got = changes({"timeout": "5000", "topic": "q"}, {"timeout": "9000", "topic": "q", "new": 1})
    assert got == [
        Change("timeout", "5000", "9000", changed=True),
        Change("topic", "q", "q", changed=False),
        Change("new", ABSENT, "1", changed=True),
    ]


def test_nested_values_are_dotted_fields_and_lists_read_as_lists() -> None:
    got = changes({"limits": {"lock": 30_000, "count": 5}}, {"limits": {"lock": 60_000}})
    assert got == [
        Change("limits.lock", "30000", "60000", changed=True),
        Change("limits.count", "5", ABSENT, changed=True),
    ]
    assert changes(None, {"added": ["operator", "viewer"]}) == [
        Change("added", ABSENT, "operator, viewer", changed=True)
    ]
    assert changes(None, {"changed": []})[0].after == "(none)"
    assert changes(None, {"rows": [{"a": 1}]})[0].after == '[{"a": 1}]'


def test_bare_values_and_nothing() -> None:
    assert changes(None, None) == []
    assert changes({}, None) == []
    assert changes(3, "three") == [Change("value", "3", "three", changed=True)]
    assert changes({"ip": None}, None) == [Change("ip", "null", ABSENT, changed=True)]
    assert changes({"servers": ""}, None) == [Change("servers", BLANK, ABSENT, changed=True)]


@pytest.mark.django_db
def test_the_log_shows_real_entries_as_diffs_never_as_dict_reprs(registered: Queue) -> None:
    """Entries of real actions: an enqueue to Kafka, a login, a role change,
    an admin change and a registry edit of the queue."""
    messages.enqueue(user_with("operator"), registered, Draft(b"twelve bytes"))
    User.objects.create_user("alice", password="right-Horse-1")
    Client().post("/accounts/login/", {"username": "alice", "password": "right-Horse-1"})
    User.objects.get(username="alice").groups.add(Group.objects.get_or_create(name="operator")[0])
    edit = {"cluster": registered.cluster.pk, "topic": registered.topic, "group_id": "g2"}
    edit |= {"partitions": 3, "message_timeout_ms": 9000, "max_redeliveries": 2}
    edit |= {"backoff_initial_ms": "", "backoff_multiplier": 2.0, "backoff_max_ms": 60_000}
    assert client_as("admin").post(f"/registry/queue/{registered.pk}", edit).status_code == 302
    assert {e.action for e in AuditEntry.objects.all()} >= {
        "enqueue", "login", "role change", "register queue"
    }  # fmt: skip

    page = client_as("viewer").get("/audit/").content.decode()
    assert not re.search(r"\{(&#x27;|')", page), "a dict repr on the page"
    assert rows(page, "bytes") == [(ABSENT, "12", True)]
    assert (ABSENT, "127.0.0.1", True) in rows(page, "ip")
    assert (ABSENT, "operator", True) in rows(page, "added")
    assert rows(page, "message_timeout_ms") == [("600000", "9000", True)]
    assert rows(page, "group_id") == [(f"{registered.topic}-workers", "g2", True)]
    assert (registered.topic, registered.topic, False) in rows(page, "topic")
    assert ("local", "local", False) in rows(page, "cluster")  # by name on both sides
    assert rows(page, "id") == []
    assert (ABSENT, "(none)", True) in rows(page, "topics created")


def rows(page: str, field: str) -> list[tuple[str, str, bool]]:
    """The diff rows of ``field``, newest entry first: before, after, and
    whether it changed."""
    found = re.findall(
        rf'<tr( class="same")? data-field="{re.escape(field)}"><th scope="row">[^<]*</th>'
        r"<td><del>([^<]*)</del></td><td[^>]*>→</td><td><ins>([^<]*)</ins></td></tr>",
        page,
    )
    return [(before, after, not same) for same, before, after in found]


@pytest.mark.django_db
def test_an_admin_change_lists_the_changed_fields() -> None:
    root = User.objects.create_superuser("root", password="root-Pass-1")
    admin = Client()
    admin.force_login(root)
    edge = Cluster.objects.create(name="edge", bootstrap_servers="127.0.0.1:1")
    change = {"name": "edge", "bootstrap_servers": "127.0.0.1:2", "security_protocol": "PLAINTEXT"}
    assert admin.post(f"/admin/console/cluster/{edge.pk}/change/", change).status_code == 302
    page = client_as("viewer").get("/audit/", {"action": "admin change"}).content.decode()
    assert rows(page, "changed") == [(ABSENT, "bootstrap_servers", True)]


@pytest.mark.django_db
def test_an_ack_and_a_fire_read_as_what_they_acted_on_with_times_people_read() -> None:
    """Neither changes its thing's fields: they show the delivery and the
    schedule acted on, not every field struck out as deleted, and their
    epoch-ms fields as UTC times; a cancel does take its schedule away."""
    due = {"id": "r-1", "due_ms": 1_764_237_600_000, "target_topic": "emails"}
    AuditEntry.objects.create(
        action="ack", target="m-1", before={"partition": 0, "offset": 7, "deadline_ms": T}
    )
    AuditEntry.objects.create(action="fire schedule now", target="reminders/r-1", before=due)
    AuditEntry.objects.create(action="cancel schedule", target="reminders/r-1", before=due)
    page = client_as("viewer").get("/audit/").content.decode()
    acted = re.findall(
        r'<tr data-field="([^"]+)"><th scope="row">[^<]*</th><td>([^<]*)</td></tr>', page
    )
    assert ("deadline_ms", "2025-11-27 10:00:00 UTC") in acted
    assert ("offset", "7") in acted and ("due_ms", "2025-11-27 10:00:00 UTC") in acted
    assert rows(page, "due_ms") == [("2025-11-27 10:00:00 UTC", ABSENT, True)]  # the cancel
    assert page.count("data-acted-on") == 2
