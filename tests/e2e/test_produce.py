"""Producing by hand in a real browser: a message from the produce form, its
page, a reproduce with an edit, and a DLQ letter redriven with an edit, each
taken by a real worker."""

import re
import uuid

import pytest
from playwright.sync_api import Page, expect

from kmqadmin.kmq import QueueClient, QueueConfig
from tests.e2e.conftest import Stack, screenshot
from tests.process import wait_for
from tests.queue_helpers import poll_until

pytestmark = pytest.mark.e2e


def field(page: Page, label: str):
    """Django's labels end in a colon."""
    return page.get_by_label(re.compile(f"^{label}:?$"))


def register_queue(page: Page, topic: str) -> None:
    page.goto("/registry/cluster/new")
    field(page, "Name").fill(topic)  # a cluster of its own: tests run in any order
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#flash")).to_contain_text("saved")
    page.goto("/registry/queue/new")
    field(page, "Cluster").select_option(label=topic)
    field(page, "Topic").fill(topic)
    field(page, "Group id").fill(f"{topic}-workers")
    field(page, "Partitions").fill("1")
    field(page, "Message timeout ms").fill("600000")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#flash")).to_contain_text("saved")


def test_produce_reproduce_and_redrive_with_edits(page: Page, stack: Stack) -> None:
    topic = f"invoices-{uuid.uuid4().hex[:6]}"
    register_queue(page, topic)
    config = QueueConfig(
        bootstrap_servers=stack.bootstrap_servers,
        topic=topic,
        group_id=f"{topic}-workers",
        message_timeout_ms=600_000,
    )

    page.goto(f"/queues/{topic}/")
    page.get_by_role("link", name="Produce a message").click()
    field(page, "Key").fill("customer-9")
    field(page, "Value as").select_option(label="JSON")
    field(page, "Value").fill('{"invoice": 7')
    page.get_by_label("Header name 1").fill("trace")
    page.get_by_label("Header value 1").fill("t1")
    page.get_by_role("button", name="Produce").click()
    expect(page.locator("[data-error]")).to_contain_text("not JSON")
    field(page, "Value").fill('{"invoice": 7}')
    page.get_by_role("button", name="Produce").click()
    written = page.locator("[data-written]")
    expect(written).to_contain_text("partition 0 at offset 0")
    screenshot(page, "produce")

    written.get_by_role("link").click()
    expect(page.locator("pre.payload")).to_contain_text('"invoice": 7')
    page.get_by_role("button", name="Reproduce with edits").click()  # a link styled as one
    expect(field(page, "Key")).to_have_value("customer-9")
    expect(page.get_by_label("Header value 1")).to_have_value("t1")
    field(page, "Value").fill('{"invoice": 8}')
    page.get_by_role("button", name="Produce").click()
    expect(page.locator("[data-written]")).to_contain_text("offset 1")

    with QueueClient(config) as worker:
        first, second = sorted(poll_until(worker, 2), key=lambda m: m.offset)
        assert (first.value, second.value) == (b'{"invoice": 7}', b'{"invoice": 8}')
        assert second.key == b"customer-9" and second.headers == [("trace", b"t1")]
        worker.ack(first)
        worker.reject(second, "wrong total")
        worker.flush()

        page.goto(f"/queues/{topic}/dlq/")

        def letter_shown() -> bool:
            page.reload()
            return page.locator("tr[data-letter]").count() > 0

        wait_for(letter_shown, 30, "the letter on the DLQ page", every=0.5)
        page.get_by_role("link", name="redrive with edits").click()
        expect(field(page, "Value")).to_have_value('{"invoice": 8}')
        field(page, "Value").fill('{"invoice": 8, "total": "12.00"}')
        page.get_by_role("button", name="Redrive with edits").click()
        expect(page.locator("[data-redriven]")).to_contain_text(second.id)
        screenshot(page, "redrive-with-edits")
        [back] = poll_until(worker, 1)
        assert (back.id, back.delivery_count) == (second.id, 1)
        assert back.value == b'{"invoice": 8, "total": "12.00"}'
        worker.ack(back)
        worker.flush()

    page.goto("/audit/")
    for action in ("enqueue", "reproduce", "redrive with edits"):
        expect(page.locator("td", has_text=action).first).to_be_visible()
