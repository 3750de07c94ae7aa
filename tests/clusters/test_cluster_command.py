"""`manage.py kmq cluster add|list|remove`: a cluster registered from the
command line is checked by the registry's form and by the cluster itself
before it is saved; a refusal is one line naming what to fix, and leaves
nothing behind; removing is refused while queues use the cluster."""

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from kmqadmin.console.models import AuditEntry, Cluster, Queue
from kmqadmin.console.services.audit.diff import ABSENT
from kmqadmin.kafka.embedded.broker import EmbeddedBroker, free_port
from kmqadmin.sqs.protocol.errors import SqsError
from kmqadmin.sqs.registered import cluster as sqs_cluster
from tests.console.conftest import client_as

pytestmark = pytest.mark.django_db


def kmq(*args: str) -> str:
    out = io.StringIO()
    call_command("kmq", "cluster", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_a_reachable_cluster_is_registered_listed_and_audited(kafka: EmbeddedBroker) -> None:
    said = kmq("add", "main", "--bootstrap-servers", kafka.bootstrap_servers)
    assert said == f"registered cluster main: {kafka.bootstrap_servers} (PLAINTEXT)\n"
    saved = Cluster.objects.get(name="main")
    assert (saved.bootstrap_servers, saved.security_protocol) == (
        kafka.bootstrap_servers,
        "PLAINTEXT",
    )
    entry = AuditEntry.objects.get(action="register cluster")
    assert (entry.target, entry.status, entry.user) == ("main", "done", None)
    assert entry.after["bootstrap_servers"] == kafka.bootstrap_servers
    listed = kmq("list").splitlines()
    assert listed[0].split() == ["NAME", "BOOTSTRAP", "SERVERS", "SECURITY"]
    assert listed[1].split() == ["main", kafka.bootstrap_servers, "PLAINTEXT"]
    with pytest.raises(CommandError, match="Cluster with this Name already exists"):
        kmq("add", "main", "--bootstrap-servers", kafka.bootstrap_servers)


def test_an_unreachable_cluster_is_one_error_and_nothing_saved() -> None:
    nowhere = f"127.0.0.1:{free_port()}"
    with pytest.raises(CommandError) as refused:
        kmq("add", "gone", "--bootstrap-servers", nowhere)
    assert str(refused.value) == (
        f"cluster gone not saved: no broker at {nowhere} answered within 5 s; "
        "check --bootstrap-servers and that this machine reaches it"
    )
    assert not Cluster.objects.exists()
    assert not AuditEntry.objects.filter(action="register cluster").exists()


def test_a_secret_in_an_unset_variable_is_named_and_nothing_saved(
    kafka: EmbeddedBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KMQ_TEST_NO_SUCH_PASSWORD", raising=False)
    sasl = ["--security-protocol", "SASL_PLAINTEXT", "--sasl-mechanism", "SCRAM-SHA-512"]
    login = ["--sasl-username", "app", "--sasl-password-env", "KMQ_TEST_NO_SUCH_PASSWORD"]
    with pytest.raises(
        CommandError, match="environment variable KMQ_TEST_NO_SUCH_PASSWORD is not set"
    ):
        kmq("add", "secured", "--bootstrap-servers", kafka.bootstrap_servers, *sasl, *login)
    assert not Cluster.objects.exists()


def test_the_registry_forms_rules_are_named_by_their_options(kafka: EmbeddedBroker) -> None:
    sasl_ssl = ["--security-protocol", "SASL_SSL"]
    with pytest.raises(CommandError) as refused:
        kmq("add", "half", "--bootstrap-servers", kafka.bootstrap_servers, *sasl_ssl)
    assert str(refused.value) == (
        "cluster half not saved: --sasl-mechanism: SASL_SSL needs one of "
        "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER"
    )
    with pytest.raises(CommandError, match=r"not saved: NAME: Enter a valid .slug."):
        kmq("add", "two words", "--bootstrap-servers", kafka.bootstrap_servers)
    assert not Cluster.objects.exists()


def test_a_relative_file_is_the_one_where_the_command_ran(
    kafka: EmbeddedBroker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    tls = ["--security-protocol", "SSL", "--ssl-ca-file", "ca.pem"]
    with pytest.raises(CommandError, match=f"ssl_ca_file: cannot read file {tmp_path}/ca.pem"):
        kmq("add", "tls", "--bootstrap-servers", kafka.bootstrap_servers, *tls)
    assert not Cluster.objects.exists()


def test_the_list_shows_no_secret_reference() -> None:
    Cluster.objects.create(
        name="secured",
        bootstrap_servers="broker:9093",
        security_protocol="SASL_SSL",
        sasl_mechanism="PLAIN",
        sasl_username="app",
        sasl_password="env:KMQ_TEST_PASSWORD",
    )
    listed = kmq("list").splitlines()
    assert listed[1].split() == ["secured", "broker:9093", "SASL_SSL"]
    assert len(listed) == 2


def test_a_cluster_in_use_is_not_removed_and_an_unused_one_is(kafka: EmbeddedBroker) -> None:
    used = Cluster.objects.create(name="used", bootstrap_servers=kafka.bootstrap_servers)
    Queue.objects.create(cluster=used, topic="orders", group_id="orders-workers")
    with pytest.raises(CommandError) as refused:
        kmq("remove", "used")
    assert str(refused.value) == (
        "cluster used not removed: queue orders still use it; unregister them first"
    )
    Queue.objects.all().delete()
    assert kmq("remove", "used") == "removed cluster used\n"
    assert not Cluster.objects.exists()
    entry = AuditEntry.objects.get(action="remove cluster")
    assert (entry.target, entry.status) == ("used", "done")
    assert entry.before["bootstrap_servers"] == kafka.bootstrap_servers
    # The audit page shows it as what went, as it does /admin/'s deletes.
    [row] = client_as("viewer").get("/audit/", {"action": "remove cluster"}).context["rows"]
    went = [(c.field, c.before, c.after) for c in row["changed"]]
    assert ("bootstrap_servers", kafka.bootstrap_servers, ABSENT) in went
    with pytest.raises(CommandError, match="no cluster 'used'"):
        kmq("remove", "used")


def test_the_sqs_endpoint_with_no_cluster_says_how_to_add_one(kafka: EmbeddedBroker) -> None:
    with pytest.raises(SqsError) as unset:
        sqs_cluster()
    assert unset.value.status == 503
    assert "register one (console, or `manage.py kmq cluster add`)" in unset.value.message
    kmq("add", "main", "--bootstrap-servers", kafka.bootstrap_servers)
    assert sqs_cluster().name == "main"
