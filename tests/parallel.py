"""Which tests pytest-xdist must run on one worker (`--dist loadgroup`).

A session fixture that starts a JVM or a whole `kmq run` (the console stack,
the Schema Registry, Spark, the SASL_SSL broker, kmq's Java client, Keycloak)
would be started again on every worker its tests reached: on two cores that
costs more than the parallel run saves, and their start-up timeouts are what
fails. So the tests of one such resource form one group. Every other test
stays with the rest of its module, whose module fixtures then start once.
"""

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
# Modules that start Spark themselves (a streaming query in a child process).
SPARK_MODULES = ("tests/pipeline/", "tests/console/test_analytics.py")


def group_of(item: pytest.Item) -> str:
    """The resource group ``item`` belongs to, else its module."""
    for fixture, group in RESOURCES.items():
        if fixture in item.fixturenames:
            return group
    module = item.nodeid.split("::", 1)[0]
    return "spark" if module.startswith(SPARK_MODULES) else module


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.xdist_group(group_of(item)))
