"""Every console page at 1280 and 1920 px: nothing wider than the window
(no sideways scroll), and a screenshot of each at each width."""

import uuid

import pytest
from playwright.sync_api import Page

from kmqadmin.kmq import QueueClient, QueueProducer
from tests.e2e.conftest import Stack, screenshot
from tests.e2e.test_console import register_queue
from tests.queue_helpers import poll_until

pytestmark = pytest.mark.e2e

WIDTHS = (1280, 1920)
# Wider than the window by less than this is a scrollbar's rounding, not a page.
SLACK_PX = 2


def test_every_page_fits_at_1280_and_1920_px(page: Page, stack: Stack) -> None:
    tag = uuid.uuid4().hex[:6]
    cluster, topic = f"widths-{tag}", f"widths-{tag}"
    config = register_queue(page, stack, cluster, topic)
    producer = QueueProducer(config)
    producer.send(b'{"order": 7, "note": "' + b"long " * 60 + b'"}', key=b"k-" + tag.encode())
    producer.flush()
    producer.close()
    with QueueClient(config) as worker:
        [message] = poll_until(worker, 1)  # left in flight: the queue page has a row
    pages = {
        "dashboard": "/",
        "queue": f"/queues/{topic}/",
        "message": f"/queues/{topic}/messages/{message.id}",
        "dlq": f"/queues/{topic}/dlq/",
        "produce": f"/queues/{topic}/produce",
        "audit": "/audit/",
        "alerts": "/alerts/",
        "alert-history": "/alerts/history/",
        "registry": "/registry/",
        "topics": f"/clusters/{cluster}/topics/",
        "browse": f"/clusters/{cluster}/topics/{topic}/browse",
        "browsed": f"/clusters/{cluster}/topics/{topic}/0/{message.offset}",
        "groups": f"/clusters/{cluster}/groups/",
        "search": f"/search/?q=k-{tag}",
    }
    too_wide = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for name, path in pages.items():
            answer = page.goto(path)
            assert answer is not None and answer.status == 200, (name, path)
            if name == "queue":  # its live table, with the delivery in flight
                page.locator(f'[data-message="{message.id}"]').wait_for(timeout=30_000)
            scroll = page.evaluate("document.documentElement.scrollWidth")
            if scroll > width + SLACK_PX:
                too_wide.append(f"{name} at {width} px is {scroll} px wide")
            screenshot(page, f"width-{name}-{width}")
    assert too_wide == []

    # The message and queue pages lead into the browser.
    page.goto(pages["message"])
    page.locator("[data-browse]").click()
    page.wait_for_url(f"**{pages['browsed']}")
    page.goto(pages["queue"])
    page.locator("[data-browse]").click()
    page.wait_for_url(f"**{pages['browse']}")
