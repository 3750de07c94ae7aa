"""The message browser on the real broker: any topic of a registered
cluster, seeks by offset and time both ways, every filter, the caps, markers
and schedules decoded, and bad input answered 4xx with the reason."""

import json
import re

import pytest
from confluent_kafka import Producer
from django.contrib.auth.models import User
from django.test import Client

from kmqadmin.console.models import Queue, ScheduleTopic
from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.inspect.browse import Caps
from kmqadmin.kmq import markers
from kmqadmin.scheduler import wire
from tests.console.conftest import client_as
from tests.raw_produce import RawRecord, produce_raw

pytestmark = pytest.mark.django_db

T0 = 1_700_000_000_000
N = 40


def produce(bootstrap: str, topic: str, records: list[dict]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for record in records:
        producer.produce(topic, partition=0, **record)
    assert producer.flush(10) == 0


@pytest.fixture
def filled(registered: Queue) -> Queue:
    """Partition 0 of the queue topic: N JSON orders, record i at T0 + i s."""
    records = [
        {
            "key": f"order-{i}",
            "value": json.dumps({"n": i, "items": [{"qty": i % 7}]}).encode(),
            "headers": [("tenant", b"acme" if i % 4 == 0 else b"other")],
            "timestamp": T0 + i * 1000,
        }
        for i in range(N)
    ]
    produce(registered.cluster.bootstrap, registered.topic, records)
    return registered


def browse(client: Client, queue: Queue, topic: str | None = None, **query: object):
    return client.get(f"/clusters/local/topics/{topic or queue.topic}/browse", query)


def shown(response) -> list[int]:
    """The offsets of the page's records, in the page's order."""
    assert response.status_code == 200, response.content.decode()[:2000]
    return [int(o) for o in re.findall(r'data-offset="0/(\d+)"', response.content.decode())]


def stopped(response) -> list[str]:
    """What the page says stopped its read (the end, or which cap), to tell
    a short page's cause when an assertion on it fails."""
    text = response.content.decode()
    return re.findall(r'data-stopped="[^"]*"|[^<>]*(?:continue from|ran out)[^<>]*', text)


def test_the_nav_leads_to_the_cluster_topics_with_their_kinds(filled: Queue) -> None:
    viewer = client_as("viewer")
    assert 'href="/clusters/"' in viewer.get("/").content.decode()
    assert viewer.get("/clusters/")["Location"] == "/clusters/local/topics/"
    page = viewer.get("/clusters/local/topics/").content.decode()
    for topic, kind in (
        (filled.topic, "queue"),
        (filled.dlq_topic, "dlq"),
        (filled.markers_topic, "markers"),
    ):
        assert re.search(rf'data-topic="{topic}">.*?</td><td>{kind}</td>', page), topic
    assert "__consumer_offsets" not in page


def test_a_first_look_is_the_newest_records_newest_first(filled: Queue) -> None:
    assert shown(browse(client_as("viewer"), filled)) == list(range(N - 1, -1, -1))


def test_seek_by_offset_forward_and_backward_with_a_continue_link(filled: Queue) -> None:
    viewer = client_as("viewer")
    forward = browse(viewer, filled, start="offset", offset=10, direction="forward", limit=5)
    assert shown(forward) == [10, 11, 12, 13, 14]
    assert "continue from offset 15" in forward.content.decode()
    backward = browse(viewer, filled, start="offset", offset=10, direction="backward", limit=3)
    assert shown(backward) == [9, 8, 7]
    assert "continue from offset 7" in backward.content.decode()
    oldest = browse(viewer, filled, start="oldest", direction="forward", limit=2)
    assert shown(oldest) == [0, 1]


def test_seek_by_time_both_ways(filled: Queue) -> None:
    viewer = client_as("viewer")
    at = "2023-11-14T22:13:40.500Z"  # T0 + 20.5 s
    assert shown(browse(viewer, filled, start="time", at=at, direction="forward", limit=2)) == [
        21,
        22,
    ]
    assert shown(browse(viewer, filled, start="time", at=at, direction="backward", limit=2)) == [
        20,
        19,
    ]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"key": "order-3"}, [3, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39]),
        ({"header": "tenant=acme"}, list(range(0, N, 4))),
        ({"header": "tenant"}, list(range(N))),
        ({"header": "region"}, []),
        ({"contains": '"n": 17,'}, [17]),
        ({"json_path": "$.items[?@.qty == 6]"}, [6, 13, 20, 27, 34]),
        ({"json_path": "$[?@.n > 36]", "header": "tenant=acme"}, []),
        ({"json_path": "$[?@.n > 35]", "header": "tenant=other"}, [37, 38, 39]),
    ],
)
def test_every_filter(filled: Queue, query: dict, expected: list[int]) -> None:
    page = browse(client_as("viewer"), filled, start="oldest", direction="forward", **query)
    assert shown(page) == expected, stopped(page)


def test_the_scan_cap_stops_a_page_and_its_continue_link_goes_on(
    filled: Queue, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kmqadmin.console.services.browsing.query.CAPS", Caps(scanned=15))
    viewer = client_as("viewer")
    query = {"start": "oldest", "direction": "forward", "key": "order-39"}
    first = browse(viewer, filled, **query)
    page = first.content.decode()
    assert shown(first) == [] and 'data-stopped="scanned"' in page
    assert "continue from offset 15" in page
    link = re.search(r'href="\?([^"]+)" data-continue', page).group(1).replace("&amp;", "&")
    second = viewer.get(f"/clusters/local/topics/{filled.topic}/browse?{link}")
    assert "continue from offset 30" in second.content.decode()
    third = browse(viewer, filled, **query | {"start": "offset", "offset": 30})
    assert shown(third) == [39] and 'data-stopped="end"' in third.content.decode(), stopped(third)


def test_the_time_cap_says_it_stopped_the_read(
    filled: Queue, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kmqadmin.console.services.browsing.query.CAPS", Caps(seconds=0))
    page = browse(client_as("viewer"), filled, start="oldest", direction="forward")
    assert 'data-stopped="time"' in page.content.decode()
    assert "the time limit ran out" in page.content.decode()


def test_a_message_in_json_text_and_hex_renderings(filled: Queue) -> None:
    viewer = client_as("viewer")
    url = f"/clusters/local/topics/{filled.topic}/0/6"
    page = viewer.get(url).content.decode()
    assert 'data-rendering="json"' in page and "&quot;qty&quot;: 6" in page
    assert 'data-copy="#rendering"' in page and "data-record-actions" in page
    for name in ("json", "text", "hex"):
        assert f'data-rendering-link="{name}"' in page
    assert 'data-rendering="text"' in viewer.get(url, {"as": "text"}).content.decode()
    hexed = viewer.get(url, {"as": "hex"}).content.decode()
    assert 'data-rendering="hex"' in hexed and "7b 22 6e 22" in hexed  # {"n"


def test_markers_are_decoded_as_markers_and_a_bad_one_shown_raw_with_why(filled: Queue) -> None:
    produce(
        filled.cluster.bootstrap,
        filled.markers_topic,
        [
            {"key": markers.encode_key(0, 5), "value": markers.start(30_000), "timestamp": T0},
            {"key": markers.encode_key(0, 5), "value": markers.reject("bad order")},
            {"key": b"short", "value": markers.END},
        ],
    )
    viewer = client_as("viewer")
    base = f"/clusters/local/topics/{filled.markers_topic}/0"
    start = viewer.get(f"{base}/0").content.decode()
    assert 'data-rendering="marker"' in start
    assert "queue record: partition 0, offset 5" in start and "marker: START" in start
    assert "redeliver at: 2023-11-14 22:13:50.000 UTC" in start
    assert "reason: bad order" in viewer.get(f"{base}/1").content.decode()
    bad = viewer.get(f"{base}/2").content.decode()
    assert "not a kmq marker: marker key must be 12 bytes" in bad and "73 68 6f 72 74" in bad


def test_the_list_shows_binary_as_hex_and_markers_as_what_they_say(filled: Queue) -> None:
    """Never glyph boxes: a key or value that is not printable UTF-8 shows as
    hex, and a markers topic's rows say what each marker does."""
    produce(
        filled.cluster.bootstrap,
        filled.markers_topic,
        [
            {"key": markers.encode_key(0, 5), "value": markers.start(30_000), "timestamp": T0},
            {"key": markers.encode_key(0, 5), "value": markers.END},
            {"key": b"short", "value": b"\x00\xff"},
        ],
    )
    viewer = client_as("viewer")
    rows = browse(viewer, filled, filled.markers_topic, partition=0).content.decode()
    assert f"start of {filled.topic}/0/5, due 2023-11-14 22:13:50 UTC" in rows
    assert f"end (ack) of {filled.topic}/0/5" in rows
    assert "0x000000000000000000000005" in rows  # the packed key
    assert "0x00ff" in rows and "\ufffd" not in rows  # garbage stays raw, in hex
    produce(filled.cluster.bootstrap, filled.dlq_topic, [{"key": b"\x89PNG", "value": b"\xc3("}])
    letters = browse(viewer, filled, filled.dlq_topic, partition=0).content.decode()
    assert "0x89504e47" in letters and "0xc328" in letters and "\ufffd" not in letters


def test_schedules_are_decoded_as_schedules_and_a_bad_one_shown_raw_with_why(
    filled: Queue, topic: str
) -> None:
    schedules = f"{topic}-schedules"
    ScheduleTopic.objects.create(cluster=filled.cluster, topic=schedules, group_id=f"{topic}-s")
    ensure_topics(filled.cluster.bootstrap, {schedules: 1})
    headers = wire.schedule_headers(T0, "invoices", b"inv-1", [("trace", b"t-9")])
    produce(
        filled.cluster.bootstrap,
        schedules,
        [
            {"key": b"remind-1", "value": b"pay", "headers": headers},
            {"key": b"remind-1", "value": None},
            {"key": b"remind-2", "value": b"pay", "headers": [("scheduler-epoch", b"soon")]},
        ],
    )
    viewer = client_as("viewer")
    base = f"/clusters/local/topics/{schedules}/0"
    fired = viewer.get(f"{base}/0").content.decode()
    assert 'data-rendering="schedule"' in fired and "schedule: remind-1" in fired
    assert "fires at: 2023-11-14 22:13:20.000 UTC" in fired and "target topic: invoices" in fired
    assert "target key: inv-1" in fired and "passes header trace: t-9" in fired
    assert "tombstone: cancels schedule remind-1" in viewer.get(f"{base}/1").content.decode()
    bad = viewer.get(f"{base}/2").content.decode()
    assert (
        "not a schedule: no scheduler-target-topic header" in bad and "data-rendering-error" in bad
    )
    assert f'data-topic="{schedules}">' in viewer.get("/clusters/local/topics/").content.decode()


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ({"start": "offset", "offset": "abc"}, "Enter a whole number"),
        ({"start": "offset", "offset": "-1"}, "greater than or equal to 0"),
        ({"start": "offset", "offset": str(2**63)}, "less than or equal to"),
        ({"start": "offset"}, "starting at an offset needs the offset"),
        ({"partition": "99"}, "has partitions [0, 1, 2], not 99"),
        ({"partition": str(2**31)}, "less than or equal to"),
        ({"start": "time", "at": "yesterday"}, "expected ISO 8601"),
        ({"start": "time", "at": "1960-01-01T00:00:00Z"}, "the time must be after 1970"),
        ({"json_path": "$.items[?@.qty >]"}, "JSONPath"),
        ({"header": "=acme"}, "a header name is needed"),
        ({"direction": "sideways"}, "Select a valid choice"),
        ({"limit": "1000"}, "less than or equal to 100"),
    ],
)
def test_bad_input_is_a_400_saying_why(filled: Queue, query: dict, reason: str) -> None:
    answer = browse(client_as("viewer"), filled, **query)
    assert answer.status_code == 400
    assert reason in answer.content.decode().replace("&#x27;", "'").replace("&quot;", '"')


def test_what_does_not_exist_is_a_404_and_bad_coordinates_a_400(filled: Queue) -> None:
    viewer = client_as("viewer")
    assert browse(viewer, filled, topic="no-such-topic").status_code == 404
    assert viewer.get(f"/clusters/nowhere/topics/{filled.topic}/browse").status_code == 404
    assert viewer.get("/clusters/nowhere/topics/").status_code == 404
    base = f"/clusters/local/topics/{filled.topic}"
    assert viewer.get(f"{base}/0/{N}").status_code == 404  # past the end
    assert viewer.get(f"{base}/1/0").status_code == 404  # an empty partition
    assert viewer.get(f"{base}/99/0").status_code == 400
    assert viewer.get(f"{base}/{2**31}/0").status_code == 400
    assert viewer.get(f"{base}/0/{2**63}").status_code == 400
    assert viewer.get("/clusters/local/topics/no-such-topic/0/0").status_code == 404


def test_viewers_browse_and_others_do_not(filled: Queue) -> None:
    urls = [
        "/clusters/local/topics/",
        f"/clusters/local/topics/{filled.topic}/browse",
        f"/clusters/local/topics/{filled.topic}/0/0",
    ]
    viewer, roleless = client_as("viewer"), Client()
    roleless.force_login(User.objects.create_user("roleless"))
    for url in urls:
        assert viewer.get(url).status_code == 200, url
        assert client_as(None).get(url).status_code == 302, url
        assert roleless.get(url).status_code == 403, url


def test_a_record_whose_headers_do_not_decode_is_listed_filtered_and_shown(filled: Queue) -> None:
    hostile = RawRecord(b'{"n": 1}', b"order-x", headers=[(b"\xff\xfe", b"v")])
    [offset] = produce_raw(filled.cluster.bootstrap, filled.topic, [hostile])
    viewer = client_as("viewer")
    listed = browse(viewer, filled, start="offset", offset=offset, direction="forward")
    assert shown(listed) == [offset] and "undecodable" in listed.content.decode()
    assert shown(browse(viewer, filled, start="offset", offset=offset, header="tenant")) == []
    assert shown(browse(viewer, filled, start="offset", offset=offset, json_path="$.n")) == [offset]
    page = viewer.get(f"/clusters/local/topics/{filled.topic}/0/{offset}")
    assert page.status_code == 200 and "data-undecodable" in page.content.decode()
