"""The alerts pages: rules with their state, a rule's form, silencing, the
defaults offered to a queue, the history; role-checked and audited."""

from datetime import timedelta

import pytest
from django.utils import timezone

from kmqadmin.console.models import AlertEvent, AlertRule, AuditEntry, Queue
from kmqadmin.console.services import secrets_at_rest
from tests.console.conftest import client_as

pytestmark = pytest.mark.django_db

HOOK = "https://hooks.slack.com/services/T0/B0/secret-token"


def _form(queue: Queue, **given: object) -> dict:
    fields = {
        "target": f"queue:{queue.pk}",
        "condition": "dead_letters",
        "threshold": "0",
        "window_minutes": "10",
        "webhook_url": HOOK,
        "webhook_secret": "s3cret",
        "slack": "on",
        "emails": "oncall@example.com\n",
        "enabled": "on",
    }
    return fields | given


def test_an_admin_adds_a_rule_and_a_viewer_sees_it_without_the_webhook_secret(
    registered: Queue,
) -> None:
    admin = client_as("admin")
    assert client_as("operator").get("/alerts/new").status_code == 403
    saved = admin.post("/alerts/new", _form(registered))
    assert saved.status_code == 302
    rule = AlertRule.objects.get()
    assert (rule.queue, rule.slack, rule.recipients()) == (registered, True, ["oncall@example.com"])
    assert secrets_at_rest.decrypt(rule.webhook_secret) == "s3cret"
    assert AuditEntry.objects.get(action="alert rule add").status == "done"
    page = client_as("viewer").get("/alerts/").content.decode()
    assert (
        "https://hooks.slack.com/…" in page and "secret-token" not in page and "s3cret" not in page
    )
    assert HOOK in admin.get("/alerts/").content.decode()


@pytest.mark.parametrize(
    "field, value, says",
    [
        ("threshold", "-1", "greater than or equal to 0"),
        ("threshold", "lots", "whole number"),
        ("window_minutes", "0", "greater than or equal to 1"),
        ("webhook_url", "ftp://x.example.com/", "http(s) URL"),
        ("emails", "not-an-address", "valid email"),
        ("condition", "cpu", "not one of the available choices"),
    ],
)
def test_a_nonsense_value_is_refused_on_the_form(registered: Queue, field, value, says) -> None:
    refused = client_as("admin").post("/alerts/new", _form(registered, **{field: value}))
    assert refused.status_code == 400 and says in refused.content.decode()
    assert not AlertRule.objects.exists()


def test_a_share_queue_cannot_have_a_tracker_condition(registered: Queue) -> None:
    share = Queue.objects.create(
        cluster=registered.cluster, topic="shared", group_id="g", backend="share"
    )
    refused = client_as("admin").post("/alerts/new", _form(share, condition="markers_lag"))
    assert refused.status_code == 400 and "a share queue has none" in refused.content.decode()


def test_an_edit_keeps_the_secret_and_the_checks_state(registered: Queue) -> None:
    admin = client_as("admin")
    admin.post("/alerts/new", _form(registered))
    rule = AlertRule.objects.get()
    AlertRule.objects.filter(pk=rule.pk).update(firing=True, value=4)
    edit = _form(registered, threshold="7", webhook_secret="")
    del edit["target"]
    assert admin.post(f"/alerts/{rule.pk}/edit", edit).status_code == 302
    rule.refresh_from_db()
    assert (rule.threshold, rule.firing, rule.value) == (7, True, 4)
    assert secrets_at_rest.decrypt(rule.webhook_secret) == "s3cret"
    entry = AuditEntry.objects.get(action="alert rule change")
    assert (entry.before["threshold"], entry.after["threshold"]) == (0, 7)
    admin.post(f"/alerts/{rule.pk}/edit", edit | {"remove_webhook_secret": "on"})
    rule.refresh_from_db()
    assert bytes(rule.webhook_secret) == b""
    too_many = "\n".join(f"a{n}@example.com" for n in range(21))
    refused = admin.post(f"/alerts/{rule.pk}/edit", edit | {"emails": too_many})
    assert refused.status_code == 400 and "20 addresses at most" in refused.content.decode()


def test_an_operator_silences_and_unsilences_and_a_viewer_cannot(registered: Queue) -> None:
    rule = AlertRule.objects.create(queue=registered, condition="dead_letters", threshold=0)
    url = f"/alerts/{rule.pk}/silence"
    assert client_as("viewer").post(url, {"minutes": "60"}).status_code == 403
    operator = client_as("operator")
    assert operator.post(url, {"minutes": "60"}).status_code == 302
    rule.refresh_from_db()
    assert rule.silenced_until > timezone.now() + timedelta(minutes=59)
    assert "silenced until" in operator.get("/alerts/").content.decode()
    operator.post(url, {"minutes": "0"})
    operator.post(url, {"minutes": "forever"})  # refused, said on the page
    rule.refresh_from_db()
    assert rule.silenced_until is None
    assert AuditEntry.objects.filter(action="alert rule silence").count() == 2


def test_a_queue_without_rules_is_offered_the_defaults(registered: Queue) -> None:
    admin = client_as("admin")
    assert "Add the default rules" in admin.get("/alerts/").content.decode()
    queue_page = admin.get(f"/queues/{registered.topic}/").content.decode()
    assert "data-offer-alert-rules" in queue_page and "0 alert rules" in queue_page
    admin.post(f"/alerts/defaults/{registered.pk}")
    assert AlertRule.objects.filter(queue=registered).count() == 5
    assert "Add the default rules" not in admin.get("/alerts/").content.decode()
    queue_page = admin.get(f"/queues/{registered.topic}/").content.decode()
    assert "data-offer-alert-rules" not in queue_page and "5 alert rules" in queue_page
    rule = AlertRule.objects.filter(queue=registered).first()
    assert admin.post(f"/alerts/{rule.pk}/delete").status_code == 302
    assert AlertRule.objects.filter(queue=registered).count() == 4


def test_the_history_shows_each_alert_and_whom_it_was_told(registered: Queue) -> None:
    rule = AlertRule.objects.create(queue=registered, condition="dead_letters", threshold=0)
    now = timezone.now()
    AlertEvent.objects.create(
        rule=rule,
        at=now,
        kind="firing",
        value=3,
        threshold=0,
        told="failed",
        attempts=4,
        error="webhook: https://hooks.example.com/… answered 500 Internal Server Error",
    )
    AlertEvent.objects.create(
        rule=rule,
        at=now + timedelta(minutes=9),
        kind="resolved",
        value=0,
        threshold=0,
        told="sent",
        attempts=1,
    )
    viewer = client_as("viewer")
    page = viewer.get("/alerts/history/").content.decode()
    assert page.index('data-kind="resolved"') < page.index('data-kind="firing"')
    assert "answered 500" in page and "4 tries" in page
    fired = viewer.get("/alerts/history/?kind=firing").content.decode()
    assert 'data-kind="resolved"' not in fired
