"""The API's live tail through a broker that stalls (SIGSTOP, as a broker
in a long GC pause or behind a partition) and resumes: the stream stays
open, and every matching record, written before, during (queued by its
producer) and after the stall, arrives exactly once, in order."""

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import requests
from confluent_kafka import Producer

from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from tests.api.test_tail import TOKEN, events
from tests.process import kill9, manage
from tests.sqs.conftest import set_up, start_web

STALL_S = 8  # past librdkafka's socket timeouts of a fetch in flight


def test_a_stalled_broker_pauses_the_stream_and_loses_nothing(
    own_broker: EmbeddedBroker, tmp_path: Path
) -> None:
    bootstrap = own_broker.bootstrap_servers
    settings = {"KMQ_DATA_DIR": str(tmp_path), "KAFKA_BOOTSTRAP_SERVERS": bootstrap}
    set_up(settings, [])
    made = manage("shell", "-c", TOKEN, **settings)
    assert made.returncode == 0, made.stderr
    ensure_topics(bootstrap, {"stalled": 1})
    process, port = start_web(settings)
    url = f"http://127.0.0.1:{port}/api/v1/clusters/local/topics/stalled/tail"
    auth = {"Authorization": f"Token {made.stdout.split()[-1]}"}
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    got: list[str] = []
    names: list[str] = []
    try:
        with requests.get(
            url, params={"seconds": 90}, headers=auth, stream=True, timeout=60
        ) as answer:
            assert answer.status_code == 200, answer.text
            stream = events(answer)
            assert next(stream)[0] == "started"
            write(producer, "before", 3)
            read_until(stream, got, names, 3)
            os.kill(own_broker.process.pid, signal.SIGSTOP)
            try:
                write(producer, "during", 3, flush=False)  # queued: the broker is away
                time.sleep(STALL_S)  # the stall's length itself, not a wait for a condition
            finally:
                os.kill(own_broker.process.pid, signal.SIGCONT)
            assert producer.flush(60) == 0
            write(producer, "after", 3)
            read_until(stream, got, names, 9)
    finally:
        kill9(process)
    expected = [f"{tag} {n}" for tag in ("before", "during", "after") for n in range(3)]
    assert got == expected, got
    assert "end" not in names, names
    print(json.dumps({"events": names}))


def write(producer: Producer, tag: str, n: int, flush: bool = True) -> None:
    for i in range(n):
        producer.produce("stalled", f"{tag} {i}".encode(), partition=0)
    if flush:
        assert producer.flush(30) == 0


def read_until(
    stream: Iterator[tuple[str, dict]], got: list[str], names: list[str], n: int
) -> None:
    """Events until ``n`` record values have come (the request's read
    timeout bounds a stream that goes quiet for good)."""
    for name, data in stream:
        names.append(name)
        if name == "records":
            got += [r["value"] for r in data["records"]]
        if len(got) >= n or name == "end":
            return
