"""Data masking in a real browser: an admin sets a queue's masking rules in
the registry form, and a viewer, logged in on their own, opens the message
page and the message browser and never sees the secrets; the admin does."""

import json
import uuid

import pytest
from playwright.sync_api import Browser, Page, expect

from kmqadmin.kmq import QueueConfig, QueueProducer
from tests.e2e.conftest import Stack, screenshot
from tests.e2e.test_produce import field, register_queue

pytestmark = pytest.mark.e2e

CARD = "4111-CARD-SECRET"
TOKEN = "tok-HEADER-SECRET"
PIN = "PIN-9876-5432"


def set_rules(page: Page, topic: str) -> None:
    page.goto("/registry/")
    page.get_by_role("link", name=topic, exact=True).last.click()
    field(page, "Mask json paths").fill("$.card")
    field(page, "Mask headers").fill("x-auth")
    field(page, "Mask patterns").fill(r"PIN-\d{4}-\d{4}")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#flash")).to_contain_text("saved")


def add_viewer(page: Page, name: str, password: str) -> None:
    """Through /admin/, as an admin gives someone the viewer role."""
    page.goto("/admin/auth/user/add/")
    page.locator("#id_username").fill(name)
    page.locator("#id_password1").fill(password)
    page.locator("#id_password2").fill(password)
    page.get_by_role("button", name="Save", exact=True).click()
    page.locator("#id_groups_from").select_option(label="viewer")
    page.locator("#id_groups_add").click()
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messagelist")).to_contain_text("changed successfully")


def log_in(browser: Browser, stack: Stack, name: str, password: str) -> Page:
    context = browser.new_context(base_url=stack.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(name)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(stack.url)
    return page


def assert_hidden(page: Page) -> None:
    shown = page.content()
    for secret in (CARD, TOKEN, PIN):
        assert secret not in shown, page.url
        assert secret.encode().hex(" ")[:23] not in shown, page.url  # a hex dump's first bytes


def test_a_viewer_never_sees_what_the_admin_masked(
    page: Page, browser: Browser, stack: Stack
) -> None:
    topic = f"payments-{uuid.uuid4().hex[:6]}"
    register_queue(page, topic)
    producer = QueueProducer(QueueConfig(stack.bootstrap_servers, topic, f"{topic}-workers"))
    value = json.dumps({"card": CARD, "note": f"pin {PIN}"}).encode()
    producer.send(value, f"order-{PIN}".encode(), {"x-auth": TOKEN.encode()}, partition=0)
    producer.flush()
    set_rules(page, topic)
    name, password = f"viewer-{uuid.uuid4().hex[:6]}", uuid.uuid4().hex
    add_viewer(page, name, password)

    viewer = log_in(browser, stack, name, password)
    message = f"/queues/{topic}/messages/{topic}/0/0"
    viewer.goto(message)
    expect(viewer.locator("[data-masked]")).to_be_visible()
    expect(viewer.locator("pre.payload")).to_contain_text('"card": "***"')
    assert_hidden(viewer)
    screenshot(viewer, "masked-message")
    viewer.goto(f"/clusters/{topic}/topics/{topic}/browse?partition=0")
    expect(viewer.locator('[data-offset="0/0"]')).to_be_visible()
    assert_hidden(viewer)
    for rendering in ("json", "text", "hex"):
        viewer.goto(f"/clusters/{topic}/topics/{topic}/0/0?as={rendering}")
        expect(viewer.locator("pre").first).to_be_visible()
        assert_hidden(viewer)
    viewer.context.close()

    page.goto(message)
    expect(page.locator("pre.payload")).to_contain_text(CARD)
