"""Console tests' clients by role; their ``queue`` is the registered one
(tests/fixtures/registry.py)."""

import pytest
from django.test import Client

from kmqadmin.console.models import Queue
from tests.users import user_with


def client_as(role: str | None, **kwargs) -> Client:
    client = Client(**kwargs)
    if role is not None:
        client.force_login(user_with(role))
    return client


@pytest.fixture
def queue(registered: Queue):
    """The registered queue's configuration (the ``tracker`` fixture serves it)."""
    return registered.config()
