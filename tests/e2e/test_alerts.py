"""An alert end to end, as `kmq run` runs it: an admin adds a rule in the
browser, a worker's tracker dead-letters rejected messages, beat's check
fires the alert, the worker tells a real webhook receiver (signed with the
secret the web process stored), and the rules and history pages show it."""

import uuid

import pytest
from playwright.sync_api import Page, expect

from kmqadmin.console.services.alerts.notifications import SIGNATURE_HEADER, signature
from kmqadmin.kmq import QueueClient
from tests.alerts.receiver import receiver
from tests.e2e.conftest import Stack, screenshot
from tests.e2e.test_console import label_of, register_queue
from tests.process import wait_for
from tests.queue_helpers import poll_until, send

pytestmark = pytest.mark.e2e

SECRET = "e2e-hook-secret"


def test_dead_letters_fire_an_alert_told_once_to_a_signed_webhook(page: Page, stack: Stack) -> None:
    name = f"alerting-{uuid.uuid4().hex[:6]}"
    config = register_queue(page, stack, name, name)
    with receiver() as hook:
        page.goto("/alerts/")
        page.get_by_role("button", name="New rule").click()
        label_of(page, "Target").select_option(label=f"queue {name} ({name})")
        label_of(page, "Condition").select_option("dead_letters")
        label_of(page, "Threshold").fill("0")
        label_of(page, "Webhook url").fill(hook.url)
        label_of(page, "Webhook secret").fill(SECRET)
        page.get_by_role("button", name="Save").click()
        expect(page.locator("#flash")).to_contain_text("saved alert rule")
        row = page.locator("tr[data-rule]", has_text=name)
        expect(row).to_contain_text("webhook http://127.0.0.1")

        send(config, 2)
        with QueueClient(config) as worker:
            for message in poll_until(worker, 2):
                worker.reject(message, "poison")
        wait_for(lambda: hook.received, 90, "the alert told to the webhook")
        page.reload()
        state = row.locator("[data-state]")
        expect(state).to_contain_text("FIRING")
        screenshot(page, "alerts")
        told_at = state.get_attribute("data-checked-at")
        for _ in range(2):  # two more checks while it lasts
            wait_for(lambda at=told_at: _checked_after(page, state, at), 30, "another check")
            told_at = state.get_attribute("data-checked-at")
    [told] = hook.received  # once, though checked every 5 s while it lasts
    assert told.json()["alert"] == "firing" and told.json()["value"] == 2
    assert told.headers[SIGNATURE_HEADER] == signature(SECRET, told.body)

    page.goto("/alerts/history/")
    event = page.locator("tr[data-event]", has_text=name).first
    expect(event).to_contain_text("FIRING")
    expect(event.locator("[data-told]")).to_have_attribute("data-told", "sent")
    screenshot(page, "alert-history")


def _checked_after(page: Page, state, at: str | None) -> bool:
    page.reload()
    return state.get_attribute("data-checked-at") != at
