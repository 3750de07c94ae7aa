"""Debian's chromium driven by Playwright, for every browser test (Playwright
cannot download a browser here; `make browser` installs Debian's)."""

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from playwright.sync_api import Browser, sync_playwright

CHROMIUM = os.environ.get("KMQ_CHROMIUM", "/usr/bin/chromium")


@contextmanager
def launched() -> Iterator[Browser]:
    """Per module at most: Playwright's sync API runs an event loop on this
    thread while it is open, and Django refuses database calls from a thread
    with a running loop; the worker's next module may be one that makes them."""
    if shutil.which(CHROMIUM) is None:
        pytest.fail(f"{CHROMIUM} not found: `make test` installs Debian's chromium (make browser)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        try:
            yield browser
        finally:
            browser.close()
