"""The audit log cannot be skipped: intent before the Kafka effect, outcome
after, for every kind of change, whole and printable, append-only."""

import pytest
from confluent_kafka import Producer
from django.contrib.auth.models import Group, User
from django.db import DatabaseError
from django.forms import MultiWidget
from django.test import Client
from rest_framework.authtoken.models import Token

from kmqadmin.console.models import AuditEntry, Cluster, Queue
from kmqadmin.console.models.audit import AppendOnly
from kmqadmin.console.services.audit import trail as audit
from kmqadmin.console.services.clusters import clients
from kmqadmin.console.services.jobs import purge_queue
from kmqadmin.console.services.queues import letters, messages
from kmqadmin.kmq import QueueProducer
from kmqadmin.kmq.draft import Draft
from tests.api.conftest import client_as as api_client_as
from tests.console.conftest import client_as
from tests.kafka_helpers import read_all
from tests.users import user_with

pytestmark = pytest.mark.django_db


def superuser_client() -> tuple[Client, User]:
    root = User.objects.create_superuser("root", password="root-Pass-1")
    client = Client()
    client.force_login(root)
    return client, root


def entries(*actions: str) -> list[tuple]:
    found = AuditEntry.objects.filter(action__in=actions).order_by("id")
    return list(found.values_list("action", "target", "status", "username"))


def test_the_intent_is_written_before_the_effect(registered: Queue, monkeypatch) -> None:
    seen: list[tuple[str, str]] = []
    send = QueueProducer.send_confirmed

    def send_seeing_the_log(self, *args, **kwargs) -> tuple[int, int]:
        seen.extend(AuditEntry.objects.filter(action="enqueue").values_list("target", "status"))
        return send(self, *args, **kwargs)

    monkeypatch.setattr(QueueProducer, "send_confirmed", send_seeing_the_log)
    messages.enqueue(user_with("operator"), registered, Draft(b"m"))
    assert seen == [(registered.topic, "pending")]
    assert entries("enqueue") == [("enqueue", registered.topic, "done", "operator")]


def test_no_effect_when_the_intent_cannot_be_written(registered: Queue, monkeypatch) -> None:
    operator = user_with("operator")

    def database_away(*args, **kwargs) -> None:
        raise DatabaseError("the database is away")

    monkeypatch.setattr(AuditEntry, "save", database_away)
    with pytest.raises(DatabaseError):
        messages.enqueue(operator, registered, Draft(b"never"))
    assert read_all(registered.config(), registered.topic) == []


def test_an_effect_kafka_refuses_leaves_a_failed_entry_on_the_page(kafka) -> None:
    dead = Cluster.objects.create(name="dead", bootstrap_servers="127.0.0.1:1")
    queue = Queue.objects.create(cluster=dead, topic="unreachable", group_id="g")
    try:
        answer = api_client_as("operator").post(
            "/api/v1/queues/unreachable/messages/", {"value": "v"}, "json"
        )
    finally:
        clients.close(queue.topic)  # its producer would retry the dead address all session
    assert answer.status_code == 503
    [entry] = AuditEntry.objects.filter(action="enqueue")
    assert (entry.target, entry.status) == (queue.topic, "failed")
    assert "not delivered" in entry.error
    page = client_as("viewer").get("/audit/", {"action": "enqueue"}).content.decode()
    assert 'data-status="failed"' in page and "not delivered" in page


def test_registry_saves_are_audited_once_valid_whatever_kafka_says(kafka) -> None:
    admin = client_as("admin")
    dead = Cluster.objects.create(name="dead", bootstrap_servers="127.0.0.1:1")
    fields = {"cluster": dead.pk, "topic": "far-away", "group_id": "g", "partitions": 1}
    fields |= {"message_timeout_ms": 5000, "max_redeliveries": 2, "backoff_multiplier": 2.0}
    fields |= {"backoff_max_ms": 60_000}
    assert admin.post("/registry/queue/new", fields | {"topic": "no spaces"}).status_code == 400
    assert not AuditEntry.objects.filter(action="register queue").exists()
    assert admin.post("/registry/queue/new", fields).status_code == 503  # no topics made
    [entry] = AuditEntry.objects.filter(action="register queue")
    assert (entry.target, entry.status, entry.after["topic"]) == ("far-away", "failed", "far-away")
    assert entry.error.startswith("BrokerUnavailable: cannot reach Kafka at 127.0.0.1:1")


def test_a_failed_job_is_audited_from_start_to_failure(kafka) -> None:
    cluster = Cluster.objects.create(name="c", bootstrap_servers=kafka.bootstrap_servers)
    queue = Queue.objects.create(cluster=cluster, topic="never-created", group_id="g")
    admin = user_with("admin")
    job = purge_queue.apply(args=(queue.pk, admin.pk))
    assert job.failed()
    [entry] = AuditEntry.objects.filter(action="purge")
    assert (entry.target, entry.status, entry.username) == ("never-created", "failed", "admin")
    assert entry.error.startswith("TopicMissing") and "never-created" in entry.error


def test_logins_and_failed_logins_keep_the_name_tried_never_the_password() -> None:
    alice = User.objects.create_user("alice", password="right-Horse-1")
    browser = Client()
    for name, password in (("alice", "wrong-Pony-2"), ("nobody", "wrong-Pony-2")):
        refused = browser.post("/accounts/login/", {"username": name, "password": password})
        assert refused.status_code == 200
    login = {"username": "alice", "password": "right-Horse-1"}
    assert browser.post("/accounts/login/", login).status_code == 302
    logins = AuditEntry.objects.filter(action="login").order_by("id")
    assert list(logins.values_list("target", "status", "username", "user")) == [
        ("alice", "failed", "", None),
        ("nobody", "failed", "", None),
        ("alice", "done", "alice", alice.pk),
    ]
    assert logins[0].error == "invalid credentials"
    stored = str(list(logins.values()))
    assert "Pony" not in stored and "Horse" not in stored


def test_admin_adds_changes_and_deletes_are_audited() -> None:
    admin, _ = superuser_client()
    add = {"name": "edge", "bootstrap_servers": "127.0.0.1:1", "security_protocol": "PLAINTEXT"}
    assert admin.post("/admin/console/cluster/add/", add).status_code == 302
    edge = Cluster.objects.get(name="edge")
    change = add | {"bootstrap_servers": "127.0.0.1:2"}
    assert admin.post(f"/admin/console/cluster/{edge.pk}/change/", change).status_code == 302
    doomed = [Cluster.objects.create(name=n).pk for n in ("x1", "x2")]
    bulk = {"action": "delete_selected", "_selected_action": doomed, "post": "yes"}
    assert admin.post("/admin/console/cluster/", bulk).status_code == 302
    deleted = admin.post(f"/admin/console/cluster/{edge.pk}/delete/", {"post": "yes"})
    assert deleted.status_code == 302
    assert not Cluster.objects.exists()
    assert entries("admin add", "admin change", "admin delete") == [
        ("admin add", "console.cluster edge", "done", "root"),
        ("admin change", "console.cluster edge", "done", "root"),
        ("admin delete", "console.cluster x1; console.cluster x2", "done", "root"),
        ("admin delete", "console.cluster edge", "done", "root"),
    ]
    assert AuditEntry.objects.get(action="admin change").after == {"changed": ["bootstrap_servers"]}


def form_data(page) -> dict:
    """What the admin change form at ``page`` would post back unchanged."""
    data: dict = {}
    for field in page.context["adminform"].form:
        value, widget = field.value(), field.field.widget
        if isinstance(widget, MultiWidget):
            for i, part in enumerate(widget.decompress(value)):
                data[f"{field.html_name}_{i}"] = "" if part is None else part
        elif value is not None and not field.field.disabled:
            data[field.html_name] = value
    return data


def test_role_changes_in_the_admin_are_audited_as_the_admins() -> None:
    admin, _ = superuser_client()
    bob = user_with("viewer", "bob")
    url = f"/admin/auth/user/{bob.pk}/change/"
    operator = Group.objects.get(name="operator").pk
    changed = admin.post(url, form_data(admin.get(url)) | {"groups": [operator]})
    assert changed.status_code == 302, changed.context["adminform"].form.errors
    roles = AuditEntry.objects.filter(action="role change").order_by("id")
    assert list(roles.values_list("username", "target", "after")) == [
        ("", "bob", {"added": ["viewer"]}),  # user_with, outside any request
        ("root", "bob", {"removed": ["viewer"]}),
        ("root", "bob", {"added": ["operator"]}),
    ]


def test_token_creation_and_deletion_are_audited_without_the_key() -> None:
    admin, _ = superuser_client()
    carol = User.objects.create_user("carol")
    assert admin.post("/admin/authtoken/tokenproxy/add/", {"user": carol.pk}).status_code == 302
    key = Token.objects.get(user=carol).key
    url = f"/admin/authtoken/tokenproxy/{carol.pk}/delete/"
    assert admin.post(url, {"post": "yes"}).status_code == 302
    assert not Token.objects.exists()
    target = "API token of carol"
    assert entries("create API token", "delete API token", "admin add", "admin delete") == [
        ("admin add", target, "done", "root"),  # the intent, then the change inside it
        ("create API token", target, "done", "root"),
        ("admin delete", target, "done", "root"),
        ("delete API token", target, "done", "root"),
    ]
    assert key not in str(list(AuditEntry.objects.values()))


def test_a_deleted_user_keeps_their_name_on_their_entries(registered: Queue) -> None:
    dave = user_with("operator", "dave")
    messages.enqueue(dave, registered, Draft(b"m"))
    dave.delete()
    entry = AuditEntry.objects.get(action="enqueue")
    assert (entry.user, entry.username) == (None, "dave")
    page = client_as("viewer").get("/audit/", {"user": "dave"}).content.decode()
    assert registered.topic in page


def test_entries_cannot_be_changed_or_deleted_from_the_admin_or_the_model() -> None:
    entry = audit.record(None, "enqueue", "q")
    admin, _ = superuser_client()
    base = f"/admin/console/auditentry/{entry.pk}"
    assert admin.get(f"{base}/change/").status_code == 200  # to read
    assert admin.post(f"{base}/change/", {"action": "nothing"}).status_code == 403
    assert admin.post(f"{base}/delete/", {"post": "yes"}).status_code == 403
    assert admin.get("/admin/console/auditentry/add/").status_code == 403
    bulk = {"action": "delete_selected", "_selected_action": [entry.pk], "post": "yes"}
    admin.post("/admin/console/auditentry/", bulk)
    entry.action = "nothing"
    for refused in (
        entry.save,
        entry.delete,
        AuditEntry.objects.all().delete,
        lambda: AuditEntry.objects.filter(pk=entry.pk).update(action="nothing"),
        lambda: entry.finish(AuditEntry.Status.FAILED),
    ):
        with pytest.raises(AppendOnly):
            refused()
    assert AuditEntry.objects.get(pk=entry.pk).action == "enqueue"


@pytest.mark.production
def test_a_long_target_with_a_nul_from_a_producer_is_kept_whole_and_printable(
    registered: Queue,
) -> None:
    """On PostgreSQL, which refuses NUL in text and jsonb (the production
    pass of `make test`): a letter whose kmq-id header a producer filled."""
    config = registered.config()
    stolen = "k" * 1250 + "\x00\x1b[31m"
    producer = Producer({"bootstrap.servers": config.bootstrap_servers})
    producer.produce(config.dlq_topic, b"v", partition=0, headers=[("kmq-id", stolen.encode())])
    assert producer.flush(10) == 0
    operator = user_with("operator")
    letters.redrive(operator, registered, 0, 0)
    entry = AuditEntry.objects.get(action="redrive")
    assert (entry.target, entry.status) == ("k" * 1250 + "\\x00\\x1b[31m", "done")
    noted = audit.record(operator, "reject", "q/0/0", after={"reason\x00": "bad\x00"})
    noted.refresh_from_db()
    assert noted.after == {"reason\\x00": "bad\\x00"}
