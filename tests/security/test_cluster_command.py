"""`kmq cluster add` on a SASL_SSL cluster (SCRAM-SHA-512, a CA, a client
certificate): saved with where its password is, once the cluster accepted
the login; a refused login is one error naming the settings, nothing saved."""

import pytest
from django.core.management.base import CommandError

from kmqadmin.console.models import AuditEntry, Cluster
from tests.clusters.test_cluster_command import kmq
from tests.security.conftest import PASSWORD, USER, SecureKafka

pytestmark = pytest.mark.django_db


def test_a_secured_cluster_is_saved_by_reference_once_it_accepts_the_login(
    secure_kafka: SecureKafka, password_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    certificates = secure_kafka.certificates
    options = [
        *("--bootstrap-servers", secure_kafka.bootstrap_servers),
        *("--security-protocol", "SASL_SSL", "--sasl-mechanism", "SCRAM-SHA-512"),
        *("--sasl-username", USER, "--sasl-password-env", password_env),
        *("--ssl-ca-file", str(certificates.ca)),
        *("--ssl-cert-file", str(certificates.client_cert)),
        *("--ssl-key-file", str(certificates.client_key)),
    ]
    said = kmq("add", "secured", *options)
    assert said == f"registered cluster secured: {secure_kafka.bootstrap_servers} (SASL_SSL)\n"
    saved = Cluster.objects.get()
    assert (saved.sasl_username, saved.sasl_password) == (USER, f"env:{password_env}")
    assert saved.ssl_key_file == str(certificates.client_key)
    assert PASSWORD not in str(AuditEntry.objects.get(action="register cluster").after)
    monkeypatch.setenv(password_env, "not-the-password")
    with pytest.raises(CommandError) as refused:
        kmq("add", "refused", *options)
    message = str(refused.value)
    assert message.startswith(
        f"cluster refused: sasl_username / sasl_password (env:{password_env}): "
        f"SCRAM-SHA-512 login as user {USER} refused"
    )
    assert message.endswith("; nothing saved")
    assert "not-the-password" not in message
    assert list(Cluster.objects.values_list("name", flat=True)) == ["secured"]
