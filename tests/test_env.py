"""Pure rules for reading the environment (no Django settings import)."""

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db.utils import ConnectionHandler
from pytest_django import DjangoDbBlocker

from kmqadmin import env


def test_unset_database_url_means_a_sqlite_file_in_wal_mode(
    tmp_path: Path, django_db_blocker: DjangoDbBlocker
) -> None:
    """Web, worker and beat share the file: WAL, and write transactions that
    wait for the lock instead of failing with "database is locked"."""
    config = env.database("", tmp_path)
    assert config["NAME"] == str(tmp_path / "db.sqlite3")
    connections = ConnectionHandler({"default": config})
    try:
        with django_db_blocker.unblock(), connections["default"].cursor() as cursor:
            cursor.execute("PRAGMA journal_mode")
            assert cursor.fetchone()[0] == "wal"
        assert connections["default"].transaction_mode == "IMMEDIATE"
    finally:
        connections.close_all()


def test_postgres_url_selects_postgresql(tmp_path: Path) -> None:
    config = env.database("postgres://u:p@db.example:5433/kmq", tmp_path)
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["HOST"], config["PORT"], config["NAME"]) == ("db.example", 5433, "kmq")


@pytest.mark.parametrize("url", ["", "postgres://u:p@db.example/kmq"])
def test_connections_are_kept_and_checked_unless_the_url_says_otherwise(
    tmp_path: Path, url: str
) -> None:
    config = env.database(url, tmp_path)
    assert (config["CONN_MAX_AGE"], config["CONN_HEALTH_CHECKS"]) == (env.CONN_MAX_AGE_S, True)
    if url:
        assert env.database(url + "?conn_max_age=0", tmp_path)["CONN_MAX_AGE"] == 0


@pytest.mark.parametrize("url", ["nosuchdb://x/y", "not a url"])
def test_bad_database_url_names_the_variable(tmp_path: Path, url: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL"):
        env.database(url, tmp_path)


def test_unset_kafka_means_the_embedded_port() -> None:
    assert env.kafka_bootstrap_servers("", 19999) == ("127.0.0.1:19999", True)
    assert env.kafka_bootstrap_servers("k1:9092,k2:9092", 19999) == ("k1:9092,k2:9092", False)


def test_redis_url_switches_channel_layer_and_celery(tmp_path: Path) -> None:
    layers = env.channel_layers("redis://r:6379/1")
    assert layers["default"]["BACKEND"] == "channels_redis.core.RedisChannelLayer"
    assert layers["default"]["CONFIG"] == {"hosts": ["redis://r:6379/1"]}
    assert env.celery_transport("redis://r:6379/1", tmp_path) == ("redis://r:6379/1", {})


def test_unset_redis_needs_no_server(tmp_path: Path) -> None:
    layers = env.channel_layers("")
    assert layers["default"]["BACKEND"] == "channels.layers.InMemoryChannelLayer"
    url, options = env.celery_transport("", tmp_path)
    assert url == "filesystem://localhost//"
    assert Path(options["data_folder_in"]).is_dir()


def test_secret_key_is_generated_once(tmp_path: Path) -> None:
    first = env.secret_key("", tmp_path)
    assert len(first) >= 50
    assert env.secret_key("", tmp_path) == first
    assert env.secret_key("given", tmp_path) == "given"


@pytest.mark.parametrize(
    ("issuer", "client_id", "secret", "named"),
    [
        ("https://sso.example.com/realms/acme", "", "s", "KMQ_OIDC_CLIENT_ID"),
        ("https://sso.example.com/realms/acme", "kmqadmin", "", "KMQ_OIDC_CLIENT_SECRET"),
        ("sso.example.com", "kmqadmin", "s", "KMQ_OIDC_ISSUER"),
    ],
)
def test_single_sign_on_names_the_missing_or_bad_variable(
    issuer: str, client_id: str, secret: str, named: str
) -> None:
    with pytest.raises(ImproperlyConfigured, match=named):
        env.sso_client(issuer, client_id, secret)


def test_single_sign_on_is_off_without_an_issuer() -> None:
    assert env.sso_client("", "", "") == ("", "")


def test_role_groups_are_group_equals_role_pairs() -> None:
    assert env.sso_role_groups(" ops = operator, leads=admin,ops2=operator ,") == {
        "ops": "operator",
        "leads": "admin",
        "ops2": "operator",
    }
    for bad in ("ops=root", "=admin", "ops"):
        with pytest.raises(ImproperlyConfigured, match="KMQ_OIDC_ROLE_GROUPS"):
            env.sso_role_groups(bad)


def test_local_login_takes_one_of_three_words() -> None:
    issuer = "https://sso.example.com"
    assert [env.local_login(v, issuer) for v in ("on", "admins", "off")] == ["on", "admins", "off"]
    with pytest.raises(ImproperlyConfigured, match="KMQ_LOCAL_LOGIN"):
        env.local_login("yes", issuer)


def test_local_login_off_needs_single_sign_on() -> None:
    with pytest.raises(ImproperlyConfigured, match="KMQ_OIDC_ISSUER is not set"):
        env.local_login("off", "")


def test_an_origin_is_scheme_and_host_and_port() -> None:
    assert env.origin("https://sso.example.com/realms/acme") == "https://sso.example.com"
    assert env.origin("http://127.0.0.1:8080/realms/kmq/") == "http://127.0.0.1:8080"


def test_email_url_becomes_the_default_mailer() -> None:
    smtp = env.mailers("smtp+tls://alerts:pw@mail.example.com:587")["default"]
    assert smtp["BACKEND"] == "django.core.mail.backends.smtp.EmailBackend"
    assert smtp["OPTIONS"] == {
        "host": "mail.example.com",
        "port": 587,
        "username": "alerts",
        "password": "pw",
        "use_tls": True,
        "timeout": env.SMTP_TIMEOUT_S,
    }
    ssl = env.mailers("smtp+ssl://mail.example.com:465?timeout=3")["default"]["OPTIONS"]
    assert (ssl["use_ssl"], ssl["timeout"]) == (True, 3)
    console = env.mailers("consolemail://")["default"]
    assert console == {"BACKEND": "django.core.mail.backends.console.EmailBackend", "OPTIONS": {}}


def test_bad_email_url_names_the_variable() -> None:
    with pytest.raises(ImproperlyConfigured, match="EMAIL_URL"):
        env.mailers("carrier-pigeon://loft")
