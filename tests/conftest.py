"""Fixtures shared by the whole suite (its broker is tests/broker.py)."""

import logging
import uuid
from collections.abc import Iterator

import pytest

from kmqadmin.celery import app as celery_app
from kmqadmin.console.services.clusters import clients
from kmqadmin.kafka.embedded.cluster import EmbeddedCluster

# Fixtures more than one folder uses; a folder's conftest may override one
# (the console and API tests serve a registered ``queue``).
pytest_plugins = [
    "tests.jvm",
    "tests.broker",
    "tests.database",
    "tests.parallel",
    "tests.data_dir",
    "tests.fixtures.queues",
    "tests.fixtures.schedules",
    "tests.fixtures.registry",
    "tests.fixtures.schemas",
    "tests.fixtures.stalled",
]


@pytest.fixture(autouse=True)
def kept_clients_per_test() -> Iterator[None]:
    """The clients a test's pages and calls kept go with the test: a whole
    session of them holds more file descriptors than select() can watch
    (1024), and py4j's callback server, which Spark's streaming runs need,
    uses select()."""
    yield
    clients.close()


@pytest.fixture(scope="session")
def cluster() -> Iterator[EmbeddedCluster]:
    """A 3-node KRaft cluster as production runs one (replication 3,
    min.insync.replicas 2), for the session: three JVMs cost a start each.
    A test that kills a node starts it again before it ends."""
    with EmbeddedCluster(3) as started:
        yield started


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession (two cores) for the session; started on first use."""
    from kmqadmin.pipeline.session import spark_session

    session = spark_session("local[2]", "kmqadmin-tests")
    yield session
    session.stop()
    # py4j says goodbye from __del__ at interpreter exit, after pytest has
    # closed the streams logging writes to: a traceback of noise at the end.
    logging.getLogger("py4j").setLevel(logging.WARNING)


@pytest.fixture
def topic() -> str:
    """A topic name no other test uses (the broker is shared)."""
    return f"t-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def eager_tasks() -> Iterator[None]:
    """Tasks run inside the request, their states stored as a worker's are.

    A task reads task_store_eager_result once, when it is bound to the app on
    first use: the tasks are set too, so which test used them first (an
    eager one or not) does not matter."""
    conf = celery_app.conf
    saved = conf.task_always_eager, conf.task_store_eager_result
    conf.task_always_eager = conf.task_store_eager_result = True
    tasks = list(celery_app.tasks.values())
    stored = [task.store_eager_result for task in tasks]
    for task in tasks:
        task.store_eager_result = True
    yield
    for task, store in zip(tasks, stored, strict=True):
        task.store_eager_result = store
    conf.task_always_eager, conf.task_store_eager_result = saved
