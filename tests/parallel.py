"""Which tests pytest-xdist must run on one worker (`--dist loadgroup`).

A session fixture that starts a JVM or a whole `kmq run` (the console stack,
the Schema Registry, Spark, the SASL_SSL broker, kmq's Java client) would be
started again on every worker its tests reached: on two cores that costs more
than the parallel run saves, and their start-up timeouts are what fails. So
the tests of one such resource form one group. Every other test stays with the
rest of its module, whose module fixtures then start once.

The longest groups are handed out first: xdist deals groups out in
collection order, and one of them started last, while the other workers
have nothing left, was the suite's tail (the last 7 % of a fresh-clone run
took 5.7 of its 18 minutes).
"""

from collections.abc import Iterator

import pytest

# Fixture -> group. The e2e stack serves the Schema Registry's pages too.
RESOURCES = {
    "stack": "stack",
    "schema_registry": "stack",
    "spark": "spark",
    "secure_kafka": "secure-kafka",
    "kmq_peer_classpath": "kmq-peer",
}
# Modules that start Spark themselves (a streaming query in a child process).
SPARK_MODULES = ("tests/pipeline/", "tests/console/test_analytics.py")
# Groups of 80 s or more in a CI run (`--durations`, the junit report), longest first.
LONGEST_FIRST = (
    "spark",
    "tests/kmq/test_crashes.py",
    "tests/failover/test_cluster_failover.py",
    "tests/scheduler/test_crashes.py",
    "stack",
    "tests/kmq/test_share_queue.py",
    "tests/test_run_outages.py",
    "tests/bench/test_queues_smoke.py",
    "tests/fuzz/test_records.py",
)


def group_of(item: pytest.Item) -> str:
    """The resource group ``item`` belongs to, else its module."""
    for fixture, group in RESOURCES.items():
        if fixture in item.fixturenames:
            return group
    module = item.nodeid.split("::", 1)[0]
    return "spark" if module.startswith(SPARK_MODULES) else module


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> Iterator[None]:
    """Groups marked before every other plugin's hook (xdist's reads them);
    longest first after them all (pytest-django's reorders), by a stable
    sort that keeps their order within a group."""
    for item in items:
        item.add_marker(pytest.mark.xdist_group(group_of(item)))
    yield
    rank = {group: i for i, group in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(group_of(item), len(rank)))
