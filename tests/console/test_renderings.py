"""A browsed record's renderings (pure logic: records built in memory)."""

import json

from kmqadmin.console.models import Cluster
from kmqadmin.console.services.browsing import renderings as module
from kmqadmin.console.services.browsing.renderings import Rendering, Source, renderings
from kmqadmin.console.services.clusters.topic_kinds import Kind
from kmqadmin.console.templatetags.kmq import SHOWN_BYTES, payload
from kmqadmin.kafka.inspect.browse import BrowsedRecord
from kmqadmin.kmq import markers


def record(value: bytes | None, key: bytes | None = None, headers=()) -> BrowsedRecord:
    return BrowsedRecord("t", 0, 1, 1_700_000_000_000, key, value, list(headers))


def at(kind: Kind) -> Source:
    """A topic of a cluster with no schema registry."""
    return Source(kind, Cluster(name="c"))


def names(found: list[Rendering]) -> list[str]:
    return [r.name for r in found]


def test_json_text_and_hex_as_the_payload_allows() -> None:
    assert names(renderings(record(b'{"a": [1]}'), at(Kind.OTHER))) == ["json", "text", "hex"]
    assert names(renderings(record(b"plain"), at(Kind.QUEUE))) == ["text", "hex"]
    assert names(renderings(record(b"\xff\x00"), at(Kind.DLQ))) == ["hex"]
    assert renderings(record(None), at(Kind.OTHER))[0].text == "(null: a tombstone)"


def test_a_long_payload_says_how_much_is_not_shown() -> None:
    [text, hexed] = renderings(record(b"x" * (SHOWN_BYTES + 5)), at(Kind.OTHER))
    assert text.text.endswith("… 5 more characters not shown")
    assert hexed.text.endswith("… 5 more bytes not shown")


def test_a_marker_whose_deadline_is_no_date_still_renders() -> None:
    extend = record(markers.extend(2**63 - 1), markers.encode_key(2, 9))
    [shown, *_] = renderings(extend, at(Kind.MARKERS))
    assert (shown.name, shown.error) == ("marker", "")
    assert "queue record: partition 2, offset 9" in shown.text
    assert "not a date" in shown.text


def test_a_bad_marker_or_schedule_is_raw_with_the_reason() -> None:
    [bad, *_] = renderings(record(b"\x09", markers.encode_key(0, 0)), at(Kind.MARKERS))
    assert bad.error == "not a kmq marker: unknown marker type 0x09" and "09" in bad.text
    undecodable = BrowsedRecord("t", 0, 1, 0, b"id", b"v", None)
    [schedule, *_] = renderings(undecodable, at(Kind.SCHEDULES))
    assert schedule.error.startswith("headers undecodable")
    for epoch, topic in ((b"-1e306", b"t"), (b"10", b"a\x00b")):
        headers = [("scheduler-epoch", epoch), ("scheduler-target-topic", topic)]
        hostile = record(b"v", b"id", headers)
        [schedule, *_] = renderings(hostile, at(Kind.SCHEDULES))
        assert schedule.error.startswith("not a schedule: scheduler-")


def test_a_new_renderer_is_one_function_in_the_list(monkeypatch) -> None:
    def shouting(found: BrowsedRecord, source: Source) -> Rendering:
        return Rendering("loud", "Loud", (found.value or b"").decode().upper())

    monkeypatch.setattr(module, "RENDERERS", [shouting, *module.RENDERERS])
    assert renderings(record(b"hi"), at(Kind.OTHER))[0] == Rendering("loud", "Loud", "HI")


def test_a_long_json_payload_is_cut_like_text() -> None:
    document = json.dumps({"a": "y" * (SHOWN_BYTES + 100)}).encode()
    [shown, *_] = renderings(record(document), at(Kind.OTHER))
    assert shown.name == "json" and len(shown.text) < SHOWN_BYTES + 100
    assert shown.text.endswith("more characters not shown")


def test_a_payload_nested_past_the_stack_is_shown_as_text() -> None:
    """The page's payload filter let json's RecursionError through: a 500."""
    deep = b"[" * SHOWN_BYTES
    assert payload(deep)["kind"] == "text"
    assert names(renderings(record(deep), at(Kind.OTHER))) == ["text", "hex"]
