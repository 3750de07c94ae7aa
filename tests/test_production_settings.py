"""DATABASE_URL and REDIS_URL switch the settings to real PostgreSQL and Redis.

Each check runs a fresh process with the variables set and makes a real
connection, so a wrong switch cannot pass by reading a default.
"""

import json

import pytest

from tests.process import manage

PROBE = """
import asyncio, json
from channels.layers import get_channel_layer
from django.db import connection
from kmqadmin.celery import app

connection.ensure_connection()
layer = get_channel_layer()

async def round_trip():
    channel = await layer.new_channel()
    await layer.send(channel, {"type": "probe"})
    return (await asyncio.wait_for(layer.receive(channel), 3))["type"]

with app.connection_for_write() as conn:
    conn.ensure_connection(max_retries=1)
    transport = conn.transport.driver_type
print(json.dumps({"db": connection.vendor, "layer": type(layer).__name__,
                  "message": asyncio.run(round_trip()), "celery": transport}))
"""

PG = "postgres://postgres:kmqadmin@127.0.0.1:5432/postgres"  # as `make services` sets it
REDIS = "redis://127.0.0.1:6379/0"


def probe(tmp_path, **env: str) -> dict:
    result = manage("shell", "-c", PROBE, KMQ_DATA_DIR=str(tmp_path), **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.production
def test_database_url_and_redis_url_select_postgresql_and_redis(tmp_path) -> None:
    assert probe(tmp_path, DATABASE_URL=PG, REDIS_URL=REDIS) == {
        "db": "postgresql",
        "layer": "RedisChannelLayer",
        "message": "probe",
        "celery": "redis",
    }


def test_unset_variables_select_the_embedded_defaults(tmp_path) -> None:
    assert probe(tmp_path) == {
        "db": "sqlite",
        "layer": "InMemoryChannelLayer",
        "message": "probe",
        "celery": "filesystem",
    }


# What a deployment behind TLS sets (docs/production.md); nothing needs a server.
PRODUCTION = {
    "DJANGO_DEBUG": "0",
    "DJANGO_SECRET_KEY": "q8Vw3-not-a-real-key-but-long-and-varied-enough-for-the-check-9xZ",
    "DJANGO_ALLOWED_HOSTS": "kmq.example.com",
    "DJANGO_SSL_REDIRECT": "1",
    "DJANGO_HSTS_PRELOAD": "1",
    "DJANGO_BEHIND_TLS_PROXY": "1",
}


def test_check_deploy_is_clean_in_the_production_profile(tmp_path) -> None:
    result = manage(
        "check", "--deploy", "--fail-level", "WARNING", KMQ_DATA_DIR=str(tmp_path), **PRODUCTION
    )
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


SAFETY = """
import json
from django.conf import settings as s
print(json.dumps({
    "secure_cookies": [s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE],
    "hsts": s.SECURE_HSTS_SECONDS,
    "redirect": s.SECURE_SSL_REDIRECT,
    "proxy_header": s.SECURE_PROXY_SSL_HEADER,
    "csp": sorted(s.SECURE_CSP),
    "idle": [s.SESSION_COOKIE_AGE, s.SESSION_SAVE_EVERY_REQUEST],
    "validators": [v["NAME"].rsplit(".", 1)[1] for v in s.AUTH_PASSWORD_VALIDATORS],
}))
"""


def safety(tmp_path, **env: str) -> dict:
    result = manage("shell", "-c", SAFETY, KMQ_DATA_DIR=str(tmp_path), **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_debug_off_is_safe_by_default_yet_serves_plain_http_as_make_run_does(tmp_path) -> None:
    found = safety(tmp_path, DJANGO_DEBUG="0")
    assert found["secure_cookies"] == [True, True]
    assert found["hsts"] >= 31_536_000
    assert (found["redirect"], found["proxy_header"]) == (False, None)
    assert {"default-src", "script-src", "style-src", "frame-ancestors"} <= set(found["csp"])
    assert found["idle"] == [3600, True]
    assert found["validators"] == [
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    ]


def test_the_switches_move_each_setting(tmp_path) -> None:
    found = safety(
        tmp_path,
        DJANGO_DEBUG="1",
        DJANGO_SSL_REDIRECT="1",
        DJANGO_BEHIND_TLS_PROXY="1",
        DJANGO_SESSION_IDLE_S="60",
    )
    assert found["secure_cookies"] == [False, False] and found["hsts"] == 0
    assert found["redirect"] is True
    assert found["proxy_header"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert found["idle"] == [60, True]
