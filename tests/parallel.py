"""Which tests pytest-xdist must run on one worker (`--dist loadgroup`).

A session fixture that starts a JVM or a whole `kmq run` (the console stack,
the Schema Registry, Spark, the SASL_SSL broker, kmq's Java client, Keycloak)
would be started again on every worker its tests reached: on two cores that
costs more than the parallel run saves, and their start-up timeouts are what
fails. So the tests of one such resource form one group. Every other test
stays with the rest of its module, whose module fixtures then start once.

A resource is the session fixture of that name: a test's own fixture named
``cluster`` (a registered Cluster row) or ``stack`` (a module's Celery
workers) starts no JVM, and its tests stay with their module rather than
lengthen the resource's group, which bounds the run's wall time.

A resource goes when its group is done on that worker, not at the end of
the session: three idle Kafka nodes, Keycloak or a whole `kmq run` would
go on taking CPU from every group after it (xdist hands a worker a group's
tests together, and tells it the next test, so a group's end is known).

The longest groups are handed out first, in order of length (the Makefile
turns off xdist's own order, by test count, which put the 5-test cluster
group last), and the many short ones after them fill the end evenly: one long
group started while the other workers have nothing left is the run's tail
(tests/test_run_outages.py, collected last, was).
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
    "cluster": "cluster",
    "keycloak": "keycloak",
}
# Modules that start Spark themselves (a streaming query in a child process),
# with the session's tests: on a worker of its own, the stream crash test ran
# beside the session's JVM in the run's busiest minutes, 218 s instead of 100.
SPARK_MODULES = ("tests/pipeline/", "tests/console/test_analytics.py")
# Groups of a minute or more in a measured run (five workers on two cores,
# `make test`'s junit report, issue 56), longest first; a group not named
# here, or named but grown, costs only balance, never a result.
LONGEST_FIRST = (
    "spark",
    "tests/kmq/test_crashes.py",
    "cluster",
    "stack",
    "tests/scheduler/test_crashes.py",
    "keycloak",
    "tests/sqs/test_broker_outage.py",
    "tests/kmq/test_share_queue.py",
    "tests/sqs/test_receive.py",
    "tests/api/test_schema.py",
    "tests/fuzz/test_records.py",
    "tests/kmq/test_queue.py",
    "tests/bench/test_queues_smoke.py",
    "tests/test_run_outages.py",
    "tests/clusters/test_run_registers_local.py",
    "tests/scheduler/test_scheduler.py",
    "tests/sqs/test_move_tasks.py",
    "tests/kmq/test_broker_stall.py",
)


def _session_fixtures(item: pytest.Item) -> set[str]:
    """The names of the session fixtures ``item`` uses, each as the closest
    definition of that name resolves it for ``item``."""
    info = getattr(item, "_fixtureinfo", None)
    defined = info.name2fixturedefs if info else {}
    return {name for name, defs in defined.items() if defs[-1].scope == "session"}


def group_of(item: pytest.Item) -> str:
    """The resource group ``item`` belongs to, else its module."""
    used = _session_fixtures(item)
    for fixture, group in RESOURCES.items():
        if fixture in used:
            return group
    module = item.nodeid.split("::", 1)[0]
    return "spark" if module.startswith(SPARK_MODULES) else module


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> Iterator[None]:
    """Groups marked before every other plugin's hook; longest first after
    them all (pytest-django's reorders), each group's tests together (so
    that a run without workers, too, ends a resource once), by a stable
    sort that keeps each group's own order."""
    groups = {id(item): group_of(item) for item in items}  # xdist renames them
    for item in items:
        item.add_marker(pytest.mark.xdist_group(groups[id(item)]))
    yield
    rank = {group: i for i, group in enumerate(LONGEST_FIRST)}
    first = {}
    for i, item in enumerate(items):
        first.setdefault(groups[id(item)], i)
    items.sort(key=lambda item: (rank.get(groups[id(item)], len(rank)), first[groups[id(item)]]))


# The resource fixtures a group's tests used on this worker, by group: the
# group's last test may be one that uses none (a Spark module's own child),
# and a group may use another's resource (the Spark tests of SASL_SSL start
# a secured broker of their own).
_USED: dict[str, dict[int, tuple]] = {}


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After the group's last test on this worker, its resources' teardown."""
    group = group_of(item)
    info = getattr(item, "_fixtureinfo", None)
    for name, defs in info.name2fixturedefs.items() if info else ():
        if name in RESOURCES and defs[-1].scope == "session":
            _USED.setdefault(group, {})[id(defs[-1])] = (defs[-1], item._request)
    if nextitem is None or group_of(nextitem) == group:
        return  # the session's own teardown, or more of the group to come
    for fixturedef, request in _USED.pop(group, {}).values():
        fixturedef.finish(request)
