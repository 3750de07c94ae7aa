"""Fixtures shared by the whole suite: a real embedded broker over TCP."""

import uuid
from collections.abc import Iterator

import pytest

from kmqadmin.celery import app as celery_app
from kmqadmin.kafka.embedded import EmbeddedBroker


@pytest.fixture(scope="session")
def kafka() -> Iterator[EmbeddedBroker]:
    """One Tansu broker for the session, on a free loopback port."""
    with EmbeddedBroker() as broker:
        yield broker


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession (two cores) for the session; started on first use."""
    from kmqadmin.pipeline.session import spark_session

    session = spark_session("local[2]", "kmqadmin-tests")
    yield session
    session.stop()


@pytest.fixture
def topic() -> str:
    """A topic name no other test uses (the broker is shared)."""
    return f"t-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def eager_tasks() -> Iterator[None]:
    """Tasks run inside the request, their states stored as a worker's are."""
    conf = celery_app.conf
    saved = conf.task_always_eager, conf.task_store_eager_result
    conf.task_always_eager = conf.task_store_eager_result = True
    yield
    conf.task_always_eager, conf.task_store_eager_result = saved
