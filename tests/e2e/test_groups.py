"""An admin resets a consumer group in a real browser: the groups list of
a registered cluster, the group's page with its lag, a preview of a reset
to a time (nothing moves), its confirmation, and the audit log's entry."""

import time
import uuid

import pytest
from playwright.sync_api import Page, expect

from kmqadmin.kafka.admin.consumer_groups import ConsumerGroupAdmin
from kmqadmin.kafka.admin.topics import ensure_topics
from tests.e2e.conftest import Stack, screenshot
from tests.e2e.test_console import label_of, register
from tests.group_helpers import consumed_group

pytestmark = pytest.mark.e2e


def test_preview_and_apply_a_reset_to_a_time(page: Page, stack: Stack) -> None:
    name = f"billing-{uuid.uuid4().hex[:6]}"
    register(page, "cluster", {"Name": name})  # a name of its own: tests run in any order
    ensure_topics(stack.bootstrap_servers, {name: 2})
    group = consumed_group(stack.bootstrap_servers, name, f"{name}-invoicers")  # offsets 4, 4

    page.goto("/")
    page.get_by_role("link", name="Groups", exact=True).click()
    if "/clusters/" not in page.url:  # other tests registered clusters too: choose ours
        page.get_by_role("link", name=name, exact=True).click()
    expect(page.locator("h1")).to_have_text(f"Groups on {name}")
    row = page.locator(f'#consumer-groups tr[data-group="{group}"]')
    expect(row).to_contain_text("Empty")
    row.get_by_role("link", name=group).click()
    expect(page.locator("[data-group-state]")).to_have_text("Empty")
    expect(page.locator(f'tr[data-offsets="{name}:0"]')).to_contain_text("4")
    expect(page.locator("[data-total-lag]")).to_have_text("0")

    half_hour_ago = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time.time() - 1800))
    label_of(page, "To").select_option("time")
    label_of(page, "At").fill(half_hour_ago)
    page.get_by_role("button", name="Preview").click()
    preview = page.locator("table[data-reset-preview]")
    expect(preview.locator(f'tr[data-move="{name}:0"]')).to_contain_text("4")
    expect(preview.locator(f'tr[data-move="{name}:1"] td').last).to_have_text("2")
    screenshot(page, "group-reset-preview")
    admin = ConsumerGroupAdmin(stack.bootstrap_servers)
    assert admin.positions(group) == {(name, 0): 4, (name, 1): 4}  # a preview moves nothing

    page.get_by_role("button", name="Apply exactly these offsets").click()
    expect(page.locator("#flash")).to_contain_text(f"reset {group}: {name}:0 4→2, {name}:1 4→2")
    assert admin.positions(group) == {(name, 0): 2, (name, 1): 2}
    page.reload()
    expect(page.locator("[data-total-lag]")).to_have_text("4")

    page.goto("/audit/")
    entry = page.locator("tr", has_text=f"consumer group {group}")
    expect(entry).to_contain_text("reset group offsets")
    expect(entry.locator("[data-status]")).to_have_text("done")
