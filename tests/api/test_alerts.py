"""The alerts API: rules per queue and schedules topic, silencing, history;
role-checked, audited, and a nonsense value is a 400 naming the field."""

from datetime import timedelta

import pytest
from django.utils import timezone

from kmqadmin.console.models import AlertEvent, AlertRule, AuditEntry, Queue, ScheduleTopic
from tests.api.conftest import client_as

pytestmark = pytest.mark.django_db


def _rules_url(queue: Queue) -> str:
    return f"/api/v1/queues/{queue.topic}/alerts/"


def test_an_admin_adds_a_rule_a_viewer_reads_it_and_the_secret_is_never_shown(
    registered: Queue,
) -> None:
    rule = {
        "condition": "dead_letters",
        "threshold": 5,
        "window_minutes": 15,
        "webhook_url": "https://hooks.example.com/kmq",
        "webhook_secret": "s3cret",
        "emails": ["oncall@example.com"],
    }
    assert client_as("operator").post(_rules_url(registered), rule, "json").status_code == 403
    made = client_as("admin").post(_rules_url(registered), rule, "json")
    assert made.status_code == 201, made.json()
    shown = made.json()
    assert "webhook_secret" not in shown and shown["has_webhook_secret"] is True
    assert (shown["target_kind"], shown["target"], shown["cluster"]) == (
        "queue",
        registered.topic,
        "local",
    )
    assert shown["emails"] == ["oncall@example.com"] and shown["firing"] is False
    assert shown["webhook_url"] == "https://hooks.example.com/kmq"  # an admin's answer
    listed = client_as("viewer").get("/api/v1/alerts/").json()
    assert [r["id"] for r in listed] == [shown["id"]]
    assert listed[0]["webhook_url"] == "https://hooks.example.com/…"  # the host only
    entry = AuditEntry.objects.get(action="alert rule add")
    assert entry.status == "done" and entry.after["webhook_secret"] == "set"
    assert entry.target == f"alert rules on queue {registered.topic}"
    assert entry.after["id"] == shown["id"]
    assert "s3cret" not in str(entry.after) and "/kmq" not in str(entry.after)


@pytest.mark.parametrize(
    "field, value",
    [
        ("threshold", -1),
        ("threshold", "lots"),
        ("threshold", 10**12),
        ("window_minutes", 0),
        ("window_minutes", 100_000),
        ("condition", "cpu"),
        ("webhook_url", "ftp://files.example.com/x"),
        ("webhook_url", "not a url"),
        ("emails", ["not-an-address"]),
    ],
)
def test_a_nonsense_value_is_a_400_naming_the_field(registered: Queue, field: str, value) -> None:
    rule = {"condition": "dead_letters", "threshold": 1, field: value}
    refused = client_as("admin").post(_rules_url(registered), rule, "json")
    assert refused.status_code == 400
    assert field in refused.json()
    assert not AlertRule.objects.exists()


def test_a_condition_the_target_cannot_have_is_refused_with_the_reason(registered: Queue) -> None:
    admin = client_as("admin")
    share = Queue.objects.create(
        cluster=registered.cluster, topic="shared", group_id="g", backend="share"
    )
    refused = admin.post(_rules_url(share), {"condition": "markers_lag", "threshold": 1}, "json")
    assert refused.status_code == 400
    assert "share queue" in str(refused.json()["condition"])
    schedules = ScheduleTopic.objects.create(
        cluster=registered.cluster, topic="later", group_id="s"
    )
    url = f"/api/v1/schedules/{schedules.topic}/alerts/"
    wrong = admin.post(url, {"condition": "dead_letters", "threshold": 1}, "json")
    assert wrong.status_code == 400 and "condition" in wrong.json()
    right = admin.post(url, {"condition": "group_lag", "threshold": 100}, "json")
    assert right.status_code == 201 and right.json()["target_kind"] == "schedules"


def test_defaults_are_offered_once_and_edits_and_deletes_are_audited(registered: Queue) -> None:
    admin = client_as("admin")
    offered = admin.post(f"{_rules_url(registered)}defaults")
    assert offered.status_code == 201
    conditions = {r["condition"] for r in offered.json()}
    assert conditions == {
        "dead_letters",
        "redeliveries",
        "oldest_in_flight",
        "markers_lag",
        "idle_workers",
    }
    assert admin.post(f"{_rules_url(registered)}defaults").json() == []
    rule_id = offered.json()[0]["id"]
    changed = admin.patch(f"/api/v1/alerts/{rule_id}", {"threshold": 7}, "json")
    assert changed.status_code == 200 and changed.json()["threshold"] == 7
    entry = AuditEntry.objects.get(action="alert rule change")
    assert (entry.before["threshold"], entry.after["threshold"]) == (
        offered.json()[0]["threshold"],
        7,
    )
    fired = AlertRule.objects.filter(pk=rule_id)
    fired.update(firing=True, value=9)
    moved = admin.patch(f"/api/v1/alerts/{rule_id}", {"condition": "group_lag"}, "json").json()
    assert (moved["firing"], moved["value"]) == (False, None)  # a new condition starts unfired
    silenced = fired.update(silenced_until=timezone.now() + timedelta(hours=1))
    admin.patch(f"/api/v1/alerts/{rule_id}", {"threshold": 8}, "json")
    assert silenced and fired.get().silenced_until is not None  # an edit keeps the state
    assert admin.delete(f"/api/v1/alerts/{rule_id}").status_code == 204
    assert AuditEntry.objects.get(action="alert rule delete").status == "done"
    assert admin.get(f"/api/v1/alerts/{rule_id}").status_code == 404


def test_an_operator_silences_a_rule_for_a_while_and_ends_the_silence(registered: Queue) -> None:
    rule = AlertRule.objects.create(queue=registered, condition="dead_letters", threshold=0)
    operator = client_as("operator")
    assert (
        client_as("viewer")
        .post(f"/api/v1/alerts/{rule.pk}/silence", {"minutes": 5}, "json")
        .status_code
        == 403
    )
    silenced = operator.post(f"/api/v1/alerts/{rule.pk}/silence", {"minutes": 60}, "json")
    assert silenced.status_code == 200
    rule.refresh_from_db()
    assert timezone.now() + timedelta(minutes=59) < rule.silenced_until
    assert (
        operator.post(f"/api/v1/alerts/{rule.pk}/silence", {"minutes": -1}, "json").status_code
        == 400
    )
    assert (
        operator.post(f"/api/v1/alerts/{rule.pk}/silence", {"minutes": 0}, "json").json()[
            "silenced_until"
        ]
        is None
    )
    assert AuditEntry.objects.filter(action="alert rule silence", status="done").count() == 2


def test_the_history_is_newest_first_filtered_and_paged(registered: Queue) -> None:
    rule = AlertRule.objects.create(queue=registered, condition="dead_letters", threshold=0)
    now = timezone.now()
    for minute, kind in enumerate(["firing", "resolved", "firing"]):
        AlertEvent.objects.create(
            rule=rule,
            at=now + timedelta(minutes=minute),
            kind=kind,
            value=1,
            threshold=0,
            told="sent",
        )
    viewer = client_as("viewer")
    page = viewer.get("/api/v1/alerts/history/?limit=2").json()
    assert [e["kind"] for e in page["results"]] == ["firing", "resolved"]
    rest = viewer.get(f"/api/v1/alerts/history/?limit=2&after={page['next']}").json()
    assert [e["kind"] for e in rest["results"]] == ["firing"] and rest["next"] is None
    fired = viewer.get(f"/api/v1/alerts/history/?kind=firing&rule={rule.pk}").json()["results"]
    assert len(fired) == 2 and fired[0]["target"] == registered.topic
    assert viewer.get("/api/v1/alerts/history/?kind=sometimes").status_code == 400
    assert viewer.get("/api/v1/alerts/history/?rule=x").status_code == 400
