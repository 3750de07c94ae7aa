"""Payloads decoded by schema, seen in a real browser: a cluster registered
with its schema registry (a real one, Apicurio), an Avro and a Protobuf
record rejected to the DLQ, read on the message page and the DLQ page."""

import datetime
import decimal
import uuid

import pytest
from playwright.sync_api import Page, expect

from kmqadmin.kmq import QueueClient, QueueConfig, QueueProducer
from tests.e2e.conftest import Stack, screenshot
from tests.e2e.test_console import register, reload_until
from tests.fixtures.schemas import Framing
from tests.queue_helpers import poll_until
from tests.schema_registry import SchemaRegistryServer

pytestmark = pytest.mark.e2e


def test_message_and_dlq_pages_show_records_decoded_by_schema(
    page: Page, stack: Stack, schema_registry: SchemaRegistryServer, framing: Framing
) -> None:
    topic, cluster = f"payments-{uuid.uuid4().hex[:6]}", f"sr-{uuid.uuid4().hex[:6]}"
    register(page, "cluster", {"Name": cluster, "Schema registry url": schema_registry.url})
    fields = {"Cluster": cluster, "Topic": topic, "Group id": f"{topic}-w", "Partitions": "1"}
    register(page, "queue", fields | {"Message timeout ms": "600000"})
    config = QueueConfig(
        bootstrap_servers=stack.bootstrap_servers, topic=topic, group_id=f"{topic}-w"
    )
    producer = QueueProducer(config)
    order = {"id": 42, "item": "lamp", "price": decimal.Decimal("19.90"), "tags": ["home"]}
    producer.send(framing.avro(topic, order))
    shipped = datetime.datetime(2026, 11, 24, 8, 30, tzinfo=datetime.UTC)
    producer.send(framing.protobuf(topic, id=7, destination="Lyon", shipped_at=shipped))
    producer.flush()
    with QueueClient(config) as worker:
        avro, protobuf = poll_until(worker, 2)
        worker.reject_all([avro, protobuf], reason="invalid address")
        worker.flush()

    query = f"?cluster={cluster}"
    page.goto(f"/queues/{topic}/messages/{avro.id}{query}")
    reload_until(page, '[data-event="dead-lettered"]')
    decoded = page.locator('[data-schema="decoded"]')
    expect(decoded).to_contain_text("decoded by schema: AVRO")
    expect(decoded.locator("pre")).to_contain_text('"item": "lamp"')
    screenshot(page, "message-decoded-by-schema")

    page.goto(f"/queues/{topic}/dlq/{query}")
    reload_until(page, "tr[data-letter]")
    letters = page.locator('tr[data-letter] [data-schema="decoded"]')
    expect(letters).to_have_count(2)
    letters.nth(1).locator("summary").click()
    expect(letters.nth(1).locator("pre")).to_contain_text('"destination": "Lyon"')
    screenshot(page, "dlq-decoded-by-schema")
