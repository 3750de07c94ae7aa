"""ClusterSecurity turns a cluster's settings into client settings; secrets
are read from where they are referenced and never printed."""

import logging
from pathlib import Path

import pytest

from kmqadmin.kafka.client.errors import ClusterSettingError
from kmqadmin.kafka.client.security.cluster import ClusterSecurity
from kmqadmin.kmq import QueueConfig
from kmqadmin.scheduler import SchedulerConfig
from kmqadmin.workers.host import ServiceHost

SECRET = "pa$$-Zq9"


def scram(**changes: str) -> ClusterSecurity:
    settings = {
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_username": "app",
        "sasl_password": "env:KMQ_TEST_SECRET",
    }
    return ClusterSecurity(cluster="prod", **(settings | changes))


def test_scram_settings_read_the_password_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KMQ_TEST_SECRET", SECRET)
    assert scram().librdkafka() == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "app",
        "sasl.password": SECRET,
    }


def test_a_file_reference_is_read_without_its_trailing_newline(tmp_path: Path) -> None:
    secret = tmp_path / "password"
    secret.write_text(SECRET + "\n")
    assert scram(sasl_password=f"file:{secret}").librdkafka()["sasl.password"] == SECRET


def test_an_unset_variable_names_the_cluster_the_setting_and_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("KMQ_TEST_SECRET", raising=False)
    with pytest.raises(ClusterSettingError) as unset:
        scram().librdkafka()
    assert str(unset.value).startswith(
        "cluster prod: sasl_password: environment variable KMQ_TEST_SECRET is not set"
    )


@pytest.mark.parametrize(
    ("setting", "reference"),
    [("sasl_password", "file:/nonexistent/password"), ("ssl_ca_file", "/nonexistent/ca.pem")],
)
def test_an_unreadable_file_names_the_cluster_the_setting_and_the_path(
    monkeypatch: pytest.MonkeyPatch, setting: str, reference: str
) -> None:
    monkeypatch.setenv("KMQ_TEST_SECRET", SECRET)
    with pytest.raises(ClusterSettingError) as unreadable:
        scram(**{setting: reference}).librdkafka()
    path = reference.removeprefix("file:")
    assert str(unreadable.value).startswith(f"cluster prod: {setting}: cannot read file {path}")


def test_oauthbearer_uses_librdkafkas_oidc_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KMQ_TEST_SECRET", SECRET)
    security = ClusterSecurity(
        cluster="prod",
        security_protocol="SASL_SSL",
        sasl_mechanism="OAUTHBEARER",
        oauth_token_endpoint="https://idp.example/token",
        oauth_client_id="kmqadmin",
        oauth_client_secret="env:KMQ_TEST_SECRET",
        oauth_scope="kafka",
    )
    assert security.librdkafka() == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.oauthbearer.method": "oidc",
        "sasl.oauthbearer.token.endpoint.url": "https://idp.example/token",
        "sasl.oauthbearer.client.id": "kmqadmin",
        "sasl.oauthbearer.client.secret": SECRET,
        "sasl.oauthbearer.scope": "kafka",
    }
    assert security.java()["sasl.jaas.config"] == (
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        f'clientId="kmqadmin" clientSecret="{SECRET}" scope="kafka";'
    )


def test_the_java_login_line_escapes_quotes_and_backslashes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KMQ_TEST_SECRET", 'a"b\\c')
    assert scram().java()["sasl.jaas.config"] == (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="app" password="a\\"b\\\\c";'
    )


@pytest.mark.parametrize(
    ("changes", "setting"),
    [
        ({"sasl_mechanism": ""}, "sasl_mechanism"),
        ({"security_protocol": "SSL"}, "sasl_mechanism"),
        ({"sasl_password": SECRET}, "sasl_password"),  # the secret itself, not where it is
        ({"sasl_password": "file:relative/path"}, "sasl_password"),
        ({"sasl_username": ""}, "sasl_username"),
        ({"ssl_cert_file": "/etc/client.pem"}, "ssl_key_file"),
    ],
)
def test_settings_that_do_not_fit_are_named(changes: dict, setting: str) -> None:
    assert setting in scram(**changes).problems()
    with pytest.raises(ClusterSettingError, match=f"cluster prod: {setting}: "):
        scram(**changes).librdkafka()


def test_configs_and_their_logs_never_show_a_secret(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("KMQ_TEST_SECRET", SECRET)
    security = scram(ssl_key_password="env:KMQ_TEST_SECRET")
    client = security.librdkafka() | {"ssl.key.location": "/k.pem"}
    queue = QueueConfig("b:9093", "orders", "workers", kafka_config=client)
    schedules = SchedulerConfig("b:9093", "s", "g", kafka_config=security.java())
    assert queue.kafka_config["sasl.password"] == SECRET  # the clients still get it
    for printed in (repr(queue), str(queue), repr(schedules), repr(queue.scheduler_config())):
        assert SECRET not in printed
        assert "'sasl.password': '***'" in printed or "'sasl.jaas.config': '***'" in printed
    assert SECRET not in repr(security)

    class Quiet:
        def start(self) -> None: ...
        def stop(self) -> None: ...

    with caplog.at_level(logging.INFO):
        host = ServiceHost()
        host.reconcile({f"tracker {queue!r}": Quiet})
        host.stop_all()
    assert "starting tracker QueueConfig" in caplog.text
    assert SECRET not in caplog.text
