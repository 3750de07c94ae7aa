"""Fixtures shared by the whole suite: a real embedded broker over TCP."""

import uuid
from collections.abc import Iterator

import pytest

from kmqadmin.kafka.embedded import EmbeddedBroker


@pytest.fixture(scope="session")
def kafka() -> Iterator[EmbeddedBroker]:
    """One Tansu broker for the session, on a free loopback port."""
    with EmbeddedBroker() as broker:
        yield broker


@pytest.fixture
def topic() -> str:
    """A topic name no other test uses (the broker is shared)."""
    return f"t-{uuid.uuid4().hex[:10]}"
