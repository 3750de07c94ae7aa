"""The test database as migrations left it, after every transactional test.

A transactional test (``django_db(transaction=True, serialized_rollback=True)``:
the live views, whose consumers run on other threads) restores what the
migrations wrote before it runs, and flushes every table after. Django runs
such tests last, so the flush harms no one; pytest-xdist hands tests to its
workers in no such order, and a test after the flush would find no role
groups. So the migrated contents come back right after the flush, as they do
before the next transactional test.
"""

from collections.abc import Iterator

import pytest
from django.db import connections
from pytest_django.plugin import blocking_manager_key


def _flushes(item: pytest.Item) -> bool:
    marker = item.get_closest_marker("django_db")
    return bool(marker and marker.kwargs.get("serialized_rollback"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    result = yield
    if _flushes(item):
        with item.config.stash[blocking_manager_key].unblock():
            for connection in connections.all():
                if contents := getattr(connection, "_test_serialized_contents", None):
                    connection.creation.deserialize_db_from_string(contents)
    return result
