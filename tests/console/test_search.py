"""The nav's search box: a kmq-id goes to its message, a key is found only
in the newest window of each queue topic, bad input is a 400 saying why."""

import re

import pytest

from kmqadmin.console.models import Cluster, Queue
from kmqadmin.console.services.browsing import search
from kmqadmin.kmq import QueueProducer
from tests.console.conftest import client_as

pytestmark = pytest.mark.django_db


def test_a_kmq_id_goes_straight_to_its_message(registered: Queue) -> None:
    producer = QueueProducer(registered.config())
    producer.send(b"hello", key=b"k", partition=1)
    producer.flush()
    producer.close()
    viewer = client_as("viewer")
    answer = viewer.get("/search/", {"q": f" {registered.topic}/1/0 "})
    assert answer.status_code == 302
    assert answer["Location"] == (
        f"/queues/{registered.topic}/messages/{registered.topic}/1/0?cluster=local"
    )
    assert b"hello" in viewer.get(answer["Location"]).content


def test_a_key_is_found_in_the_newest_window_only(registered: Queue, monkeypatch) -> None:
    monkeypatch.setattr(search, "WINDOW", 6)  # 2 newest records of each of the 3 partitions
    producer = QueueProducer(registered.config())
    producer.send(b"old", key=b"needle", partition=0)  # pushed out of the window below
    for partition in range(3):
        producer.send(b"x", key=b"hay", partition=partition)
        producer.send(b"x", key=b"hay", partition=partition)
    producer.send(b"new", key=b"needle", partition=2)
    producer.flush()
    producer.close()
    viewer = client_as("viewer")
    page = viewer.get("/search/", {"q": "needle"}).content.decode()
    links = re.findall(r'<tr data-hit>.*?<a href="([^"]+)">([^<]+)</a>', page)
    assert links == [
        (f"/queues/{registered.topic}/messages/{registered.topic}/2/2?cluster=local",
         f"{registered.topic}/2/2")
    ]  # fmt: skip
    assert "newest 6 records of each of 1 queue" in page
    hay = viewer.get("/search/", {"q": "hay"}).content.decode()
    assert hay.count("<tr data-hit>") == 5  # the sixth is older than the window


def test_an_unreachable_cluster_is_said_not_searched_and_the_rest_still_is(
    registered: Queue,
) -> None:
    dead = Cluster.objects.create(name="dead", bootstrap_servers="127.0.0.1:1")
    Queue.objects.create(cluster=dead, topic="far-away", group_id="g")
    page = client_as("viewer").get("/search/", {"q": "nothing"})
    assert page.status_code == 200
    assert b"far-away not searched" in page.content
    assert b"of 1 queue" in page.content


@pytest.mark.parametrize(
    ("query", "says"),
    [("", b"type a kmq-id"), ("   ", b"type a kmq-id"), ("a\x00b", b"control characters"),
     ("k" * 1001, b"at most 1000 characters")],
)  # fmt: skip
def test_bad_queries_are_400_with_the_reason(query: str, says: bytes) -> None:
    answer = client_as("viewer").get("/search/", {"q": query})
    assert answer.status_code == 400 and says in answer.content


def test_the_search_box_is_in_the_nav_and_needs_a_viewer() -> None:
    assert b'action="/search/"' in client_as("viewer").get("/").content
    assert client_as(None).get("/search/", {"q": "k"}).status_code == 302
