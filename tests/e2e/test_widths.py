"""Every console page at 1280 and 1920 px: nothing wider than the window
(no sideways scroll), and a screenshot of each at each width. The menu on
one row at 1280 and 1024 px, each of its entries in reach."""

import uuid

import pytest
from playwright.sync_api import Page, expect

from kmqadmin.kmq import QueueClient, QueueProducer
from tests.e2e.conftest import Stack, screenshot
from tests.e2e.test_console import register_queue
from tests.queue_helpers import poll_until

pytestmark = pytest.mark.e2e

WIDTHS = (1280, 1920)
# The menu fits whole on one row at 1280 px, and keeps to one row at 1024.
MENU_WIDTHS = (1280, 1024)
# What an admin's menu holds (an admin sees every entry).
MENU = ("Dashboard", "Topics", "Groups", "Schedules", "Alerts", "Audit log", "Registry", "API")
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


def test_the_menu_is_one_row_at_1024_and_1280_px_with_every_entry_in_reach(
    page: Page, stack: Stack
) -> None:
    """At each width every entry the menu shows is on the logo's row, inside
    the window, and the page is no wider than the window. An entry not shown
    is under a toggle on that row: opened, it shows inside the window, and
    its link leads to its page. At 1280 px nothing is folded away."""
    for width in MENU_WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto("/alerts/history/")
        assert page.evaluate("document.documentElement.scrollWidth") <= width + SLACK_PX
        menu = page.evaluate(MENU_ROW)
        assert set(MENU) <= {entry["name"] for entry in menu["entries"]}, menu["entries"]
        row = menu["row"]
        off_row = [f"{item['name']!r} at {item['box']}" for item in row if not item["fits"]]
        assert off_row == [], f"at {width} px, beside the logo at {menu['logo']}: {off_row}"
        shown = {item["name"] for item in row}
        assert {f"Log out {stack.user}", "kmq-id or key"} <= shown, shown
        folded = [entry for entry in menu["entries"] if entry["name"] not in shown]
        if width >= 1280:
            assert folded == [], f"at {width} px, folded away: {folded}"
        for entry in folded:
            assert entry["toggle"] in shown, (width, entry)
            page.get_by_role("button", name=entry["toggle"], exact=True).click()
            link = page.get_by_role("link", name=entry["name"], exact=True)
            expect(link).to_be_visible()
            box = link.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, box
            if entry is folded[0]:
                screenshot(page, f"menu-{width}-{entry['toggle'].lower()}")
            link.click()
            page.wait_for_url(f"**{entry['href']}")
            page.goto("/alerts/history/")


# The menu as the window shows it: the logo's box; each entry shown on it
# (links, buttons, the search box), with whether it is on the logo's row (its
# middle within the logo's height) and inside the window; and every link of
# the menu, shown or not, with the toggle (a popover's) that shows it.
MENU_ROW = """() => {
    const logo = document.querySelector("header nav > ul:first-child a").getBoundingClientRect();
    const row = [...document.querySelectorAll("header nav :is(a, button, input)")]
        .filter((e) => e.checkVisibility({visibilityProperty: true}))
        .map((e) => {
            const box = e.getBoundingClientRect(), middle = (box.top + box.bottom) / 2;
            return {
                name: (e.innerText || e.placeholder).trim(),
                box: [box.left, box.top, box.right, box.bottom].map(Math.round),
                fits: logo.top <= middle && middle <= logo.bottom
                    && box.left >= 0 && box.right <= document.documentElement.clientWidth,
            };
        });
    const entries = [...document.querySelectorAll("header nav a")].map((a) => {
        const popover = a.closest("[popover]");
        const toggle = popover && document.querySelector(`[popovertarget="${popover.id}"]`);
        return {name: a.textContent.trim(), href: a.getAttribute("href"),
                toggle: toggle && toggle.textContent.trim()};
    });
    return {logo: [logo.top, logo.bottom].map(Math.round), row, entries};
}"""
