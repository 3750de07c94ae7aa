"""A support person's day in the console, in a real browser over real sockets:
register a queue, watch a message go in flight, retry it, reject it, redrive
it from the DLQ, read its story; create and cancel a schedule."""

import re
import uuid

import pytest
from playwright.sync_api import Page, expect

from kmqadmin.kmq import QueueClient, QueueConfig, QueueProducer
from tests.e2e.conftest import Stack, screenshot
from tests.process import wait_for
from tests.queue_helpers import poll_until

pytestmark = pytest.mark.e2e


def register(page: Page, kind: str, fields: dict[str, str]) -> None:
    page.goto(f"/registry/{kind}/new")
    for label, value in fields.items():
        field = label_of(page, label)
        if label == "Cluster":
            field.select_option(label=value)
        else:
            field.fill(value)
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#flash")).to_contain_text("saved")


def register_queue(page: Page, stack: Stack, cluster: str, topic: str) -> QueueConfig:
    """A cluster and a one-partition queue on it, registered through the
    forms; the config a worker uses for it."""
    register(page, "cluster", {"Name": cluster})
    register(
        page,
        "queue",
        {
            "Cluster": cluster,
            "Topic": topic,
            "Group id": f"{topic}-workers",
            "Partitions": "1",
            "Message timeout ms": "600000",
        },
    )
    return QueueConfig(
        bootstrap_servers=stack.bootstrap_servers, topic=topic, group_id=f"{topic}-workers"
    )


def label_of(page: Page, label: str):
    """Django's labels end in a colon."""
    return page.get_by_label(re.compile(f"^{label}:?$"))


def reload_until(page: Page, selector: str, present: bool = True) -> None:
    """Pages that are not live: reload until the view has caught up."""

    def shown() -> bool:
        page.reload()
        return (page.locator(selector).count() > 0) == present

    wait_for(shown, 20, f"{selector} {'shown' if present else 'gone'}", every=0.5)


def test_retry_reject_redrive_and_schedules(page: Page, stack: Stack) -> None:
    topic, schedules = f"orders-{uuid.uuid4().hex[:6]}", f"reminders-{uuid.uuid4().hex[:6]}"
    register(page, "cluster", {"Name": "local"})
    queue_fields = {
        "Cluster": "local",
        "Topic": topic,
        "Group id": f"{topic}-workers",
        "Partitions": "1",
        "Message timeout ms": "600000",
    }
    register(page, "queue", queue_fields)
    config = QueueConfig(
        bootstrap_servers=stack.bootstrap_servers,
        topic=topic,
        group_id=f"{topic}-workers",
        message_timeout_ms=600_000,
        max_redeliveries=3,
    )
    producer = QueueProducer(config)
    producer.send(b'{"order": 42, "total": "9.90"}', key=b"customer-7")
    producer.flush()

    with QueueClient(config) as worker:
        [message] = poll_until(worker, 1)
        page.goto(f"/queues/{topic}/")
        row = page.locator(f'tr[data-message="{message.id}"]')
        expect(row).to_be_visible()  # pushed over the WebSocket
        screenshot(page, "queue")

        row.get_by_role("button", name="retry").click()
        expect(page.locator("#flash")).to_contain_text("retry")
        [again] = poll_until(worker, 1)
        assert (again.id, again.delivery_count) == (message.id, 2)
        expect(row.locator("[data-count]")).to_have_text("2")

        row.get_by_role("button", name="reject").click()
        expect(page.locator("#flash")).to_contain_text("reject")
        expect(row).to_have_count(0)

        page.goto(f"/queues/{topic}/dlq/")
        reload_until(page, "tr[data-letter]")
        expect(page.locator("tr[data-letter]")).to_contain_text("rejected in the console")
        screenshot(page, "dlq")
        page.locator("tr[data-letter]").get_by_role("button", name="redrive").click()
        expect(page.locator("#flash")).to_contain_text("redriven")
        [back] = poll_until(worker, 1)
        assert (back.id, back.delivery_count, back.value) == (message.id, 1, message.value)
        worker.ack(back)
        worker.flush()

    page.goto(f"/queues/{topic}/messages/{message.id}")
    expect(page.locator('[data-event="dead-lettered"]')).to_be_visible()
    expect(page.locator("pre.payload")).to_contain_text('"order": 42')
    screenshot(page, "message")

    register(
        page,
        "schedules",
        {"Cluster": "local", "Topic": schedules, "Group id": f"{schedules}-s", "Partitions": "1"},
    )
    page.goto(f"/schedules/{schedules}/new")
    label_of(page, "Id").fill("invoice-reminder-7")
    label_of(page, "At").fill("2999-01-01 10:00:00")
    label_of(page, "Target topic").fill(topic)
    label_of(page, "Value").fill("remind customer 7")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#flash")).to_contain_text("scheduled invoice-reminder-7")
    page.goto("/")
    page.get_by_role("link", name="Schedules", exact=True).click()  # the menu's
    page.get_by_role("link", name=schedules).click()
    reload_until(page, 'tr[data-schedule="invoice-reminder-7"]')
    screenshot(page, "schedules")
    reminder = page.locator('tr[data-schedule="invoice-reminder-7"]')
    reminder.get_by_role("button", name="cancel").click()
    expect(page.locator("#flash")).to_contain_text("cancelled")
    expect(reminder).to_have_count(0)  # gone without a reload

    page.goto("/")
    expect(page.locator(f'a[href^="/queues/{topic}/?"] >> xpath=../..')).to_contain_text("0")
    screenshot(page, "dashboard")
    page.goto("/audit/")
    for action in ("retry", "reject", "redrive", "schedule", "cancel schedule"):
        expect(page.locator("td", has_text=action).first).to_be_visible()
    screenshot(page, "audit")


def test_a_share_queue_its_group_its_dlq_and_its_reset(page: Page, stack: Stack) -> None:
    """Registered as a share queue in the browser: its page shows the
    connected consumer instead of an in-flight table; a rejected message is
    redriven from the DLQ; with the worker gone, an admin moves the start
    offset past everything."""
    topic = f"emails-{uuid.uuid4().hex[:6]}"
    register(page, "cluster", {"Name": topic})  # a name of its own: tests run in any order
    page.goto("/registry/queue/new")
    label_of(page, "Cluster").select_option(label=topic)
    label_of(page, "Topic").fill(topic)
    label_of(page, "Group id").fill(f"{topic}-workers")
    label_of(page, "Backend").select_option(value="share")
    label_of(page, "Partitions").fill("1")
    label_of(page, "Message timeout ms").fill("60000")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#flash")).to_contain_text("saved")
    config = QueueConfig(
        bootstrap_servers=stack.bootstrap_servers,
        topic=topic,
        group_id=f"{topic}-workers",
        message_timeout_ms=60_000,
        backend="share",
    )
    producer = QueueProducer(config)
    producer.send(b"welcome mail", key=b"user-1")
    producer.flush()

    with QueueClient(config) as worker:
        [message] = poll_until(worker, 1)
        page.goto(f"/queues/{topic}/")
        expect(page.locator("[data-no-deadlines]")).to_contain_text("acquisition lock")
        expect(page.locator("tr[data-member]")).to_contain_text(f"{topic}:0")
        screenshot(page, "share-queue")
        worker.reject(message, reason="mailbox full")
        worker.flush()

        page.goto(f"/queues/{topic}/dlq/")
        reload_until(page, "tr[data-letter]")
        expect(page.locator("tr[data-letter]")).to_contain_text("mailbox full")
        page.locator("tr[data-letter]").get_by_role("button", name="redrive").click()
        expect(page.locator("#flash")).to_contain_text("redriven")
        [back] = poll_until(worker, 1)
        assert (back.id, back.value) == (message.id, b"welcome mail")
        worker.ack(back)

    producer.send(b"never read")
    producer.flush()
    page.goto(f"/queues/{topic}/")
    reload_until(page, "tr[data-member]", present=False)
    page.locator("#share-group summary").click()
    page.locator("#share-group select").select_option("latest")
    page.locator("#share-group").get_by_role("button", name="Reset").click()
    expect(page.locator("#flash")).to_contain_text("start offsets: 0→")
    producer.send(b"after the reset")
    producer.flush()
    with QueueClient(config) as worker:
        got = poll_until(worker, 1)  # "never read" is behind the start offset now
        assert [m.value for m in got] == [b"after the reset"]
        worker.ack_all(got)
    page.goto("/audit/")
    expect(page.locator("td", has_text="reset group offsets").first).to_be_visible()
