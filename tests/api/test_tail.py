"""The API's live tail over a real HTTP connection to a web process as
`make run` serves it: Server-Sent Events of the records written after it
opened that match the filter, in the browse answer's shape, then its end;
a bad filter, a missing topic and a caller without a token refused before
any stream starts."""

import json
from collections.abc import Iterator

import pytest
import requests
from confluent_kafka import Producer

from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from tests.process import kill9, manage
from tests.sqs.conftest import set_up, start_web

TOKEN = """
from rest_framework.authtoken.models import Token
from django.contrib.auth import get_user_model
print(Token.objects.create(user=get_user_model().objects.get(username="watcher")).key)
"""


@pytest.fixture(scope="module")
def web(kafka: EmbeddedBroker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """A web process, the viewer "watcher"'s API token, and a topic of two partitions."""
    data = tmp_path_factory.mktemp("tail-web")
    settings = {"KMQ_DATA_DIR": str(data), "KAFKA_BOOTSTRAP_SERVERS": kafka.bootstrap_servers}
    set_up(settings, [])
    made = manage("shell", "-c", TOKEN, **settings)
    assert made.returncode == 0, made.stderr
    ensure_topics(kafka.bootstrap_servers, {"tailed": 2})
    process, port = start_web(settings)
    try:
        yield {
            "base": f"http://127.0.0.1:{port}/api/v1/clusters/local/topics",
            "auth": {"Authorization": f"Token {made.stdout.split()[-1]}"},
        }
    finally:
        kill9(process)


def events(answer: requests.Response) -> Iterator[tuple[str, dict]]:
    """(event, data) as they come; comments skipped."""
    name, data = "", ""
    for line in answer.iter_lines(decode_unicode=True):
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            data = line.removeprefix("data: ")
        elif line == "" and name:
            yield name, json.loads(data)
            name, data = "", ""


def test_records_written_after_it_opened_that_match(web: dict, kafka: EmbeddedBroker) -> None:
    url = f"{web['base']}/tailed/tail"
    query = {"contains": "keep", "seconds": 20}
    headers = web["auth"] | {"Accept": "text/event-stream"}
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    producer.produce("tailed", b"written before: keep", partition=0)
    producer.flush(10)
    with requests.get(url, params=query, headers=headers, stream=True, timeout=30) as answer:
        assert answer.status_code == 200, answer.text
        assert answer.headers["Content-Type"].startswith("text/event-stream")
        stream = events(answer)
        name, started = next(stream)
        assert name == "started" and set(started["from"]) == {"0", "1"}
        for n in range(6):
            value = b"keep \xff" if n == 5 else f"{'keep' if n % 2 else 'drop'} {n}".encode()
            producer.produce("tailed", value, key=f"k{n}".encode(), partition=n % 2)
        producer.flush(10)
        got: list[dict] = []
        for name, data in stream:
            if name == "records":
                got += data["records"]
                assert data["skipped"] == 0
            if name == "end" or len(got) >= 3:
                break
    assert sorted((r["key"], r["value_encoding"]) for r in got) == [
        ("k1", "utf-8"),
        ("k3", "utf-8"),
        ("k5", "base64"),
    ]
    assert all(r["partition"] == 1 and r["topic"] == "tailed" for r in got)


def test_the_stream_ends_when_its_time_is_up(web: dict) -> None:
    url = f"{web['base']}/tailed/tail"
    with requests.get(
        url, params={"seconds": 1}, headers=web["auth"], stream=True, timeout=30
    ) as answer:
        assert [name for name, _ in events(answer)] == ["started", "end"]


def test_refused_before_any_stream(web: dict) -> None:
    auth, base = web["auth"], web["base"]
    bad = requests.get(f"{base}/tailed/tail", params={"json_path": "$["}, headers=auth, timeout=10)
    assert bad.status_code == 400 and "json_path" in bad.json()
    too_long = requests.get(f"{base}/tailed/tail", params={"seconds": 0}, headers=auth, timeout=10)
    assert too_long.status_code == 400 and "seconds" in too_long.json()
    assert requests.get(f"{base}/no-such/tail", headers=auth, timeout=10).status_code == 404
    assert requests.get(f"{base}/tailed/tail", timeout=10).status_code == 401
