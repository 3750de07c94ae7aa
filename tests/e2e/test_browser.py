"""The message browser in a real browser: pick a cluster's topic, filter its
records with JSONPath, watch a new one arrive on the live tail, open one and
switch between its renderings, and copy what is shown."""

import json
import re
import uuid

import pytest
from confluent_kafka import Producer
from playwright.sync_api import Page, expect

from kmqadmin.kafka.admin.topics import ensure_topics
from tests.e2e.conftest import Stack, screenshot
from tests.e2e.test_console import label_of, register

pytestmark = pytest.mark.e2e


def write(stack: Stack, topic: str, orders: list[dict]) -> None:
    producer = Producer({"bootstrap.servers": stack.bootstrap_servers})
    for order in orders:
        producer.produce(topic, json.dumps(order).encode(), f"order-{order['id']}", partition=0)
    assert producer.flush(10) == 0


def test_browse_filter_tail_open_and_switch_renderings(page: Page, stack: Stack) -> None:
    cluster, topic = f"c-{uuid.uuid4().hex[:6]}", f"events-{uuid.uuid4().hex[:6]}"
    ensure_topics(stack.bootstrap_servers, {topic: 1})
    write(stack, topic, [{"id": i, "total": i * 10} for i in range(6)])
    register(page, "cluster", {"Name": cluster})

    page.get_by_role("link", name="Topics", exact=True).click()
    if page.url.endswith("/clusters/"):  # other tests' clusters too: choose ours
        page.get_by_role("link", name=cluster, exact=True).click()
    page.get_by_role("link", name=topic, exact=True).click()
    rows = page.locator("tbody:not(#tail) tr[data-offset]")
    expect(rows).to_have_count(6)
    expect(rows.first).to_have_attribute("data-offset", "0/5")  # newest first

    label_of(page, "JSONPath").fill("$[?@.total >= 30]")
    label_of(page, "Start").select_option("oldest")
    label_of(page, "Direction").select_option("forward")
    page.get_by_role("button", name="Browse").click()
    expect(rows).to_have_count(3)
    expect(rows.first).to_have_attribute("data-offset", "0/3")
    expect(page.locator("#tail-status")).to_contain_text("tailing from")
    write(stack, topic, [{"id": 6, "total": 1}, {"id": 7, "total": 70}])
    expect(page.locator("#tail tr[data-offset]")).to_have_count(1)
    expect(page.locator("#tail tr[data-offset]")).to_have_attribute("data-offset", "0/7")
    screenshot(page, "browser")

    rows.first.get_by_role("link", name="0/3").click()
    shown = page.locator("#rendering")
    expect(shown).to_have_attribute("data-rendering", "json")
    expect(shown).to_contain_text('"total": 30')
    page.get_by_role("link", name="Hex", exact=True).click()
    expect(shown).to_have_attribute("data-rendering", "hex")
    expect(shown).to_contain_text("7b 22 69 64 22")  # {"id"
    page.get_by_role("link", name="Text", exact=True).click()
    expect(shown).to_have_text(re.compile(r'^\{"id": 3, "total": 30\}$'))
    screenshot(page, "message-view")

    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.get_by_role("button", name="Copy").click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == shown.text_content()
