"""The API's topic browser on the real broker, reading as the console's
browser does: a cluster's topics; pages from each kind of seek, forward
and backward, with filters; records any producer can write (a binary key
and value, a header name repeated, a header value or name that is not
UTF-8); a bad seek or filter a 400 naming it; what is not there a 404."""

import base64

import pytest
from rest_framework.test import APIClient

from kmqadmin.console.models import Queue
from kmqadmin.kafka.admin.topics import ensure_topics
from tests.api.conftest import client_as
from tests.raw_produce import RawRecord, produce_raw

pytestmark = pytest.mark.django_db

RECORDS = [
    RawRecord(b'{"status": "failed", "n": 1}', b"order-1", [(b"h", b"a"), (b"h", b"b")]),
    RawRecord(b"\xfe\x01binary", b"\xff\x00", [(b"bin", b"\xfe")]),
    RawRecord(b'{"status": "ok", "n": 2}', b"order-2"),
    RawRecord(b"from a Go producer", b"order-3", [(b"\xff", b"x")]),
]


@pytest.fixture
def browsed(registered: Queue) -> str:
    """A topic of the registered cluster, beside the queue: four records on
    partition 0, none on 1."""
    topic = f"{registered.topic}-other"
    ensure_topics(registered.cluster.bootstrap, {topic: 2})
    assert produce_raw(registered.cluster.bootstrap, topic, RECORDS) == [0, 1, 2, 3]
    return topic


def records(viewer: APIClient, topic: str, **query: object) -> dict:
    answer = viewer.get(f"/api/v1/clusters/local/topics/{topic}/records/", query)
    assert answer.status_code == 200, answer.content
    return answer.json()


def offsets(page: dict) -> list[int]:
    return [r["offset"] for r in page["records"]]


def test_the_topics_and_what_each_is(registered: Queue, browsed: str) -> None:
    viewer = client_as("viewer")
    listed = viewer.get("/api/v1/clusters/local/topics/").json()
    kinds = {row["name"]: row["kind"] for row in listed}
    assert kinds[registered.topic] == "queue" and kinds[browsed] == "other"
    assert not [name for name in kinds if name.startswith("__")]
    assert viewer.get("/api/v1/clusters/nowhere/topics/").status_code == 404


def test_records_any_producer_wrote_as_they_are(browsed: str) -> None:
    page = records(client_as("viewer"), browsed, start="oldest")
    assert page["partitions"] == [0, 1] and page["stopped"] == "end"
    assert (page["low"], page["high"], page["next_offset"]) == (0, 4, None)
    first, binary, plain, undecodable = page["records"]
    assert (first["key"], first["value_encoding"]) == ("order-1", "utf-8")
    assert [(h["name"], h["value"]) for h in first["headers"]] == [("h", "a"), ("h", "b")]
    assert binary["key_encoding"] == binary["value_encoding"] == "base64"
    assert base64.b64decode(binary["key"]) == b"\xff\x00"
    assert base64.b64decode(binary["value"]) == b"\xfe\x01binary"
    assert binary["headers"] == [{"name": "bin", "value": "/g==", "encoding": "base64"}]
    assert plain["headers"] == []
    # A header name that is not UTF-8: the headers cannot be read, the rest can.
    assert undecodable["headers"] is None and undecodable["value"] == "from a Go producer"


def test_pages_from_each_seek_both_ways(browsed: str) -> None:
    viewer = client_as("viewer")
    first = records(viewer, browsed, start="oldest", limit=3)
    assert offsets(first) == [0, 1, 2] and first["stopped"] == "records"
    rest = records(viewer, browsed, start="offset", offset=first["next_offset"])
    assert offsets(rest) == [3] and rest["next_offset"] is None
    assert offsets(records(viewer, browsed)) == [3, 2, 1, 0]  # no query: the newest, backward
    newest = records(viewer, browsed, start="newest", direction="backward", limit=2)
    assert offsets(newest) == [3, 2] and newest["next_offset"] == 2
    before = records(viewer, browsed, start="offset", offset=2, direction="backward")
    assert offsets(before) == [1, 0]
    assert offsets(records(viewer, browsed, start="time", at="2001-01-01T00:00:00Z")) == [
        0,
        1,
        2,
        3,
    ]
    assert offsets(records(viewer, browsed, start="time", at="2999-01-01T00:00:00Z")) == []
    assert offsets(records(viewer, browsed, start="oldest", partition=1)) == []


def test_filters_as_the_console_has_them(browsed: str) -> None:
    viewer = client_as("viewer")
    oldest = {"start": "oldest"}
    assert offsets(records(viewer, browsed, key="order", **oldest)) == [0, 2, 3]
    assert offsets(records(viewer, browsed, header="h=b", **oldest)) == [0]
    assert offsets(records(viewer, browsed, contains="binary", **oldest)) == [1]
    failed = "$[?@.status == 'failed']"
    assert offsets(records(viewer, browsed, json_path=failed, **oldest)) == [0]


def test_one_record_in_its_renderings(browsed: str) -> None:
    viewer = client_as("viewer")
    one = viewer.get(f"/api/v1/clusters/local/topics/{browsed}/records/0/0").json()
    assert one["record"]["key"] == "order-1" and one["masked"] is False
    rendered = {r["name"]: r for r in one["renderings"]}
    assert '"failed"' in rendered["json"]["text"] and rendered["json"]["error"] == ""
    undecodable = viewer.get(f"/api/v1/clusters/local/topics/{browsed}/records/0/3").json()
    assert undecodable["record"]["headers"] is None and undecodable["renderings"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"start": "offset"}, "offset"),
        ({"start": "time"}, "at"),
        ({"start": "time", "at": "yesterday"}, "at"),
        ({"start": "sideways"}, "start"),
        ({"start": "oldest", "partition": 7}, "partition"),
        ({"start": "oldest", "limit": 0}, "limit"),
        ({"start": "oldest", "json_path": "$["}, "json_path"),
        ({"start": "oldest", "offset": -1}, "offset"),
    ],
)
def test_a_bad_seek_or_filter_is_a_400_naming_it(browsed: str, query: dict, field: str) -> None:
    answer = client_as("viewer").get(f"/api/v1/clusters/local/topics/{browsed}/records/", query)
    assert answer.status_code == 400, answer.content
    assert field in answer.json()


def test_what_is_not_there_is_a_404_and_past_kafkas_bounds_a_400(browsed: str) -> None:
    viewer = client_as("viewer")
    base = "/api/v1/clusters/local/topics"
    assert viewer.get(f"{base}/no-such-topic/records/").status_code == 404
    assert viewer.get(f"{base}/no-such-topic/records/0/0").status_code == 404
    assert viewer.get(f"{base}/{browsed}/records/0/4").status_code == 404
    assert viewer.get(f"{base}/{browsed}/records/1/0").status_code == 404
    assert viewer.get(f"{base}/{browsed}/records/9/0").status_code == 400
    assert viewer.get(f"{base}/{browsed}/records/0/{10**20}").status_code == 400
    assert client_as(None).get(f"{base}/{browsed}/records/").status_code == 401
