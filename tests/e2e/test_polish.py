"""Polish a user notices, in a real browser against `kmq run`: the nav's
search box, the audit log's before/after diffs, the dashboard's live
sparklines, and filter forms whose labels fit at 1280 and 1920 px."""

import re
import uuid

import pytest
from playwright.sync_api import Page, expect

from kmqadmin.kmq import QueueClient, QueueProducer
from tests.e2e.conftest import Stack, screenshot
from tests.e2e.test_console import label_of, register_queue
from tests.queue_helpers import poll_until

pytestmark = pytest.mark.e2e

WIDTHS = (1280, 1920)


def test_search_audit_diffs_sparklines_and_filter_forms(page: Page, stack: Stack) -> None:
    tag = uuid.uuid4().hex[:6]
    cluster, topic, key = f"cluster-{tag}", f"polish-{tag}", f"customer-{tag}"
    config = register_queue(page, stack, cluster, topic)
    producer = QueueProducer(config)
    producer.send(b'{"order": 7}', key=key.encode())
    producer.flush()
    producer.close()
    with QueueClient(config) as worker:
        [message] = poll_until(worker, 1)
        worker.ack(message)
        worker.flush()

    # The dashboard's sparkline draws the ack the stack's tracker counted.
    page.goto("/")
    row = page.locator("tr", has=page.locator(f'a[href^="/queues/{topic}/?"]'))
    expect(row.locator("svg.sparkline")).to_have_attribute(
        "aria-label", re.compile(r"^acked 1, redelivered 0, dead-lettered 0"), timeout=30_000
    )
    expect(row.locator('polyline[data-series="acked"]')).to_have_attribute(
        "data-counts", re.compile(r"(^|,)1(,|$)")
    )
    screenshot(page, "dashboard-sparklines")

    # The nav's search box: a key lists its hit, which leads to the message.
    search = page.get_by_role("searchbox", name="Find a message by kmq-id or key")
    search.fill(key)
    search.press("Enter")
    hit = page.locator("tr[data-hit]")
    expect(hit).to_have_count(1)
    expect(page.locator("[data-search-window]")).to_contain_text("newest 1000 records")
    hit.get_by_role("link", name=message.id).click()
    expect(page.locator("pre.payload")).to_contain_text('"order": 7')
    # a kmq-id goes straight to its message page
    search = page.get_by_role("searchbox", name="Find a message by kmq-id or key")
    search.fill(message.id)
    search.press("Enter")
    page.wait_for_url(re.compile(rf"/queues/{topic}/messages/{re.escape(message.id)}\?"))
    page.goto("/search/?q=")
    expect(page.locator("[data-search-error]")).to_contain_text("type a kmq-id")

    # An edit in the registry reads as field: before -> after in the audit log.
    page.goto("/registry/")
    page.get_by_role("link", name=topic, exact=True).click()
    label_of(page, "Message timeout ms").fill("300000")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#flash")).to_contain_text("saved")
    page.goto("/audit/?action=register+queue&target=" + topic)
    change = page.locator('tr[data-field="message_timeout_ms"]').first
    expect(change.locator("del")).to_have_text("600000")
    expect(change.locator("ins")).to_have_text("300000")
    folded = page.locator("details.same").first  # the fields the edit left alone
    expect(folded.locator("summary")).to_contain_text("unchanged")
    expect(folded.locator('tr.same[data-field="topic"]')).to_have_count(1)
    assert not re.search(r"\{'", page.locator("main").inner_text())
    screenshot(page, "audit")

    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for name, path in (("dlq", f"/queues/{topic}/dlq/"), ("audit", "/audit/")):
            page.goto(path)
            labels_fit_and_inputs_line_up(page, f"{name} at {width} px")
            screenshot(page, f"{name}-{width}")


def labels_fit_and_inputs_line_up(page: Page, where: str) -> None:
    """Each filter label on one line, uncut, and the inputs of a grid row at
    one height (a label squeezed onto two lines pushes its input down)."""
    fields = page.evaluate(
        """() => [...document.querySelectorAll("form.filters .fields > div")].map((d) => {
            const label = d.querySelector("label"), input = d.querySelector("input");
            const lines = label.getBoundingClientRect().height
                / parseFloat(getComputedStyle(label).lineHeight);
            return {label: label.textContent, cut: label.scrollWidth > label.clientWidth,
                    lines: Math.round(lines), top: d.getBoundingClientRect().top,
                    inputTop: input.getBoundingClientRect().top};
        })"""
    )
    assert len(fields) >= 4, where
    for field in fields:
        assert not field["cut"] and field["lines"] == 1, (where, field)
    rows: dict[float, set[float]] = {}
    for field in fields:
        rows.setdefault(field["top"], set()).add(field["inputTop"])
    assert len(rows) >= 1 and all(len(tops) == 1 for tops in rows.values()), (where, fields)
