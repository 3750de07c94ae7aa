"""Reading the environment: one variable per external part, unset = embedded.

Kept apart from settings.py so the rules (and the errors that name the
variable to fix) can be tested without importing Django settings.
"""

import base64
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured

env = environ.Env()

DEFAULT_EMBEDDED_KAFKA_PORT = 19092
# A connection is kept this long by the thread that opened it (checked before
# reuse): opening one per request cost the SQS endpoint a third of its time.
CONN_MAX_AGE_S = 60


def database(url: str | None, data_dir: Path) -> dict[str, Any]:
    """DATABASE_URL, or a SQLite file under the data dir when unset.

    `make run`'s web, worker and beat all write to that one file. In SQLite's
    default mode a reader blocks a writer, and a transaction that starts by
    reading and then writes fails at once with "database is locked" when
    another holds the lock; the worker logged that traceback. WAL lets
    readers and one writer work side by side, IMMEDIATE takes the write lock
    when a transaction begins (so it waits instead of failing half-way), and
    the timeout is how long it waits. Either way connections are kept for
    CONN_MAX_AGE_S."""
    if not url:
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(data_dir / "db.sqlite3"),
            "OPTIONS": {
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
            },
            "CONN_MAX_AGE": CONN_MAX_AGE_S,
            "CONN_HEALTH_CHECKS": True,
        }
    scheme = url.partition("://")[0] if "://" in url else ""
    if scheme not in environ.Env.DB_SCHEMES:
        raise ImproperlyConfigured(
            f"DATABASE_URL scheme {scheme!r} is not supported; use postgres://, sqlite:/// "
            "or mysql://, or unset DATABASE_URL for the SQLite default"
        )
    config = environ.Env.db_url_config(url)
    config.setdefault("CONN_MAX_AGE", CONN_MAX_AGE_S)
    config.setdefault("CONN_HEALTH_CHECKS", True)
    return config


# django-environ's names for an SMTP URL's parts, and the SMTP backend's.
_SMTP_OPTIONS = {
    "EMAIL_HOST": "host",
    "EMAIL_PORT": "port",
    "EMAIL_HOST_USER": "username",
    "EMAIL_HOST_PASSWORD": "password",
    "EMAIL_USE_TLS": "use_tls",
    "EMAIL_USE_SSL": "use_ssl",
}
# Seconds an SMTP server may take to answer, unless the URL says (?timeout=):
# without one, a server that never greets would hold the alert check forever.
SMTP_TIMEOUT_S = 10


def mailers(url: str) -> dict[str, Any]:
    """Django's MAILERS from EMAIL_URL (smtp://, smtp+tls:// and smtps://
    for STARTTLS, smtp+ssl:// for TLS from the start, consolemail://, as
    django-environ reads them)."""
    try:
        parsed = environ.Env.email_url_config(url)
    except (KeyError, ImproperlyConfigured):
        raise ImproperlyConfigured(
            f"EMAIL_URL scheme {url.partition('://')[0]!r} is not supported; use smtp://, "
            "smtp+tls://, smtps:// or consolemail://, or unset EMAIL_URL"
        ) from None
    options = {to: parsed[name] for name, to in _SMTP_OPTIONS.items() if parsed.get(name)}
    if not parsed["EMAIL_BACKEND"].endswith("smtp.EmailBackend"):
        options = {}
    else:
        options["timeout"] = parsed.get("OPTIONS", {}).get("TIMEOUT", SMTP_TIMEOUT_S)
    return {"default": {"BACKEND": parsed["EMAIL_BACKEND"], "OPTIONS": options}}


def kafka_bootstrap_servers(value: str | None, embedded_port: int) -> tuple[str, bool]:
    """The bootstrap servers, and whether they point at the embedded broker."""
    if value:
        return value, False
    return f"127.0.0.1:{embedded_port}", True


def channel_layers(redis_url: str | None) -> dict[str, Any]:
    """Redis when REDIS_URL is set; otherwise in-process (one web process)."""
    if not redis_url:
        return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    return {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [redis_url]},
        }
    }


def celery_transport(redis_url: str | None, data_dir: Path) -> tuple[str, dict[str, Any]]:
    """Redis when REDIS_URL is set; otherwise kombu's filesystem transport.

    The filesystem transport needs no server yet, unlike ``memory://``, works
    across the web, worker and beat processes.
    """
    if redis_url:
        return redis_url, {}
    folder = data_dir / "celery"
    for sub in ("processed", "control"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    # The transport ignores the host; naming one spares each process kombu's
    # "No hostname was supplied" warning.
    return "filesystem://localhost//", {
        "data_folder_in": str(folder),
        "data_folder_out": str(folder),
        "processed_folder": str(folder / "processed"),
        "control_folder": str(folder / "control"),
        "store_processed": False,
    }


def secret_key(value: str | None, data_dir: Path) -> str:
    """DJANGO_SECRET_KEY, or one generated once and kept in the data dir."""
    if value:
        return value
    path = data_dir / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


def sqs_encryption_key(value: str | None, data_dir: Path) -> str:
    """KMQ_SQS_ENCRYPTION_KEY (a Fernet key), or one generated once and kept
    in the data dir: it encrypts the SQS endpoint's access key secrets at
    rest, which must stay readable to verify signatures. Several, comma
    separated, the first encrypting: a key is rotated by putting the new
    one first (cryptography's MultiFernet)."""
    if value:
        return value
    path = data_dir / "sqs_encryption_key"
    if not path.exists():
        path.write_text(base64.urlsafe_b64encode(secrets.token_bytes(32)).decode())
        path.chmod(0o600)
    return path.read_text().strip()


# Role names of console/services/roles.py; env.py cannot import Django models.
SSO_ROLES = ("viewer", "operator", "admin")
DEFAULT_SSO_ROLE_GROUPS = "kmq-viewers=viewer,kmq-operators=operator,kmq-admins=admin"
LOCAL_LOGIN = ("on", "admins", "off")


def sso_client(issuer: str, client_id: str, client_secret: str) -> tuple[str, str]:
    """KMQ_OIDC_CLIENT_ID and _SECRET, required once KMQ_OIDC_ISSUER is set."""
    if issuer and not issuer.startswith(("https://", "http://")):
        raise ImproperlyConfigured(
            f"KMQ_OIDC_ISSUER {issuer!r} is not a URL: set it to the issuer your identity "
            "provider names, e.g. https://sso.example.com/realms/acme"
        )
    needed = {"KMQ_OIDC_CLIENT_ID": client_id, "KMQ_OIDC_CLIENT_SECRET": client_secret}
    for name, value in needed.items():
        if issuer and not value:
            raise ImproperlyConfigured(
                f"KMQ_OIDC_ISSUER is set but {name} is not: set it to this application's "
                "client at the identity provider"
            )
    return client_id, client_secret


def origin(url: str) -> str:
    """scheme://host[:port] of ``url``, as a Content-Security-Policy source."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def sso_role_groups(value: str) -> dict[str, str]:
    """KMQ_OIDC_ROLE_GROUPS, ``group=role`` pairs separated by commas: the
    identity provider's groups that give each role here."""
    pairs = {}
    for item in filter(None, (part.strip() for part in value.split(","))):
        group, _, role = (side.strip() for side in item.partition("="))
        if not group or role not in SSO_ROLES:
            raise ImproperlyConfigured(
                f"KMQ_OIDC_ROLE_GROUPS: {item!r} is not group=role with a role of "
                f"{', '.join(SSO_ROLES)}; e.g. {DEFAULT_SSO_ROLE_GROUPS}"
            )
        pairs[group] = role
    return pairs


def local_login(value: str, issuer: str) -> str:
    """KMQ_LOCAL_LOGIN: who may log in with a password kept here."""
    if value not in LOCAL_LOGIN:
        raise ImproperlyConfigured(
            f"KMQ_LOCAL_LOGIN is {value!r}: set it to on (everyone), admins (admins only, "
            "everyone else through single sign-on) or off"
        )
    if value == "off" and not issuer:
        raise ImproperlyConfigured(
            "KMQ_LOCAL_LOGIN is off but KMQ_OIDC_ISSUER is not set: nobody could log in"
        )
    return value
