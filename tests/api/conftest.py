"""API clients acting with a role (the groups the role migration creates), and
the API tests' ``queue``: the registered one (tests/fixtures/registry.py)."""

import pytest
from rest_framework.test import APIClient

from kmqadmin.console.models import Queue
from kmqadmin.kmq import QueueConfig
from tests.users import user_with


def client_as(role: str | None) -> APIClient:
    client = APIClient()
    if role is not None:
        client.force_authenticate(user_with(role))
    return client


@pytest.fixture
def operator() -> APIClient:
    return client_as("operator")


@pytest.fixture
def queue(registered: Queue) -> QueueConfig:
    """The registered queue's configuration (the ``tracker`` fixture serves it)."""
    return registered.config()
