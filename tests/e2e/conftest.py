"""The product as `make run` starts it (web, worker, beat) on the session's
broker, driven by Debian's chromium through Playwright."""

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from kmqadmin.kafka.embedded.broker import EmbeddedBroker, free_port
from tests.chromium import launched
from tests.process import Run


@dataclass(frozen=True)
class Stack:
    url: str
    user: str
    password: str
    bootstrap_servers: str


@pytest.fixture(scope="session")
def stack(kafka: EmbeddedBroker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    data = tmp_path_factory.mktemp("e2e")
    run = Run(
        "--no-demo",
        "--port",
        str(free_port()),
        KMQ_DATA_DIR=str(data),
        KAFKA_BOOTSTRAP_SERVERS=kafka.bootstrap_servers,
        KMQ_SERVICES_REFRESH_S="1",
        # No e2e test reads the charts; the analytics job would start a Spark
        # session in each of the worker's processes, beside the suite's own.
        KMQ_ANALYTICS_EVERY_S="0",
        # Alert rules checked every 5 s rather than each minute: test_alerts waits on one.
        KMQ_ALERTS_EVERY_S="5",
    )
    try:
        yield Stack(*run.up(), kafka.bootstrap_servers)
    finally:
        if run.stop() != 0:
            print("".join(run.lines[-200:]))


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launched() as browser:
        yield browser


@pytest.fixture
def page(browser: Browser, stack: Stack) -> Iterator[Page]:
    context = browser.new_context(base_url=stack.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.on("dialog", lambda dialog: dialog.accept())  # hx-confirm
    # Chromium reports what the Content-Security-Policy blocked on the console.
    blocked: list[str] = []
    page.on("console", lambda m: "Content Security Policy" in m.text and blocked.append(m.text))
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(stack.user)
    page.get_by_label("Password").fill(stack.password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(stack.url)
    yield page
    context.close()
    assert not blocked, blocked


def screenshot(page: Page, name: str) -> None:
    """Into KMQ_SCREENSHOTS (docs/ when refreshing the pictures of docs/console.md)."""
    folder = os.environ.get("KMQ_SCREENSHOTS")
    if folder:
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)
