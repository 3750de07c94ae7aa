"""API clients acting with a role (the groups the role migration creates), and
the queue and scheduler fixtures the API tests share with the cores' tests."""

import pytest
from rest_framework.test import APIClient

from tests.kmq.conftest import tracker  # noqa: F401 (fixtures, served by this conftest)
from tests.scheduler.conftest import scheduler, schedules, target  # noqa: F401
from tests.users import user_with


def client_as(role: str | None) -> APIClient:
    client = APIClient()
    if role is not None:
        client.force_authenticate(user_with(role))
    return client


@pytest.fixture
def operator() -> APIClient:
    return client_as("operator")
