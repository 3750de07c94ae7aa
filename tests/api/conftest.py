"""API clients acting with a role (the groups the role migration creates), and
the queue and scheduler fixtures the API tests share with the cores' tests."""

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.test import APIClient

from tests.kmq.conftest import tracker  # noqa: F401 (fixtures, served by this conftest)
from tests.scheduler.conftest import scheduler, schedules, target  # noqa: F401


def client_as(role: str | None) -> APIClient:
    client = APIClient()
    if role is not None:
        user = User.objects.create_user(role)
        user.groups.add(Group.objects.get(name=role))
        client.force_authenticate(user)
    return client


@pytest.fixture
def operator() -> APIClient:
    return client_as("operator")
