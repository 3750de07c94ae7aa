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
