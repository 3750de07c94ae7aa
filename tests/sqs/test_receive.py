"""ReceiveMessage, DeleteMessage and ChangeMessageVisibility by boto3, in
both protocols, against the real web process, broker and a real tracker:
a message received and not deleted comes back after its visibility
timeout with its receive count up; deleted, it never does; a long poll
returns as soon as a message comes and holds no thread while it waits; a
web process killed with messages handed out, or held in its stock, loses
none and doubles none."""

import hashlib
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from confluent_kafka import Producer

from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueConfig
from kmqadmin.kmq import headers as h
from kmqadmin.sqs.actions.send import message_id
from tests.kafka_helpers import read_all
from tests.process import kill9, wait_for
from tests.sqs.clients import PROTOCOLS, Web, error_of, receive_all, sqs
from tests.sqs.conftest import start_web

ALL = {"AttributeNames": ["All"], "MessageAttributeNames": ["All"]}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_received_messages_carry_what_was_sent_and_deleted_ones_never_return(
    web: Web, tracked: tuple[str, str], protocol: str
) -> None:
    _, url = tracked
    client = sqs(web, "worker", protocol)
    attributes = {
        "trace": {"DataType": "String", "StringValue": "t-1"},
        "blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01"},
    }
    trace = {"AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1-abc"}}
    sent = {
        client.send_message(
            QueueUrl=url,
            MessageBody=f"body {i}\r\n",
            MessageAttributes=attributes,
            MessageSystemAttributes=trace,
        )["MessageId"]
        for i in range(3)
    }
    got = receive_all(client, url, 3, **ALL)
    assert {m["MessageId"] for m in got} == sent
    for message in got:
        assert message["MD5OfBody"] == hashlib.md5(message["Body"].encode()).hexdigest()
        assert message["Body"].startswith("body ") and message["Body"].endswith("\r\n")
        assert message["Attributes"]["ApproximateReceiveCount"] == "1"
        assert int(message["Attributes"]["SentTimestamp"]) > 0
        first_receive = int(message["Attributes"]["ApproximateFirstReceiveTimestamp"])
        assert first_receive >= int(message["Attributes"]["SentTimestamp"])
        assert message["Attributes"]["AWSTraceHeader"] == "Root=1-abc"
        assert message["Attributes"]["SenderId"] == web.keys["worker"]["AWS_ACCESS_KEY_ID"]
        assert message["MessageAttributes"] == attributes
    # Deleted by MessageId as batch entry Id, as clients commonly do.
    entries = [{"Id": m["MessageId"], "ReceiptHandle": m["ReceiptHandle"]} for m in got]
    deleted = client.delete_message_batch(QueueUrl=url, Entries=entries)
    assert len(deleted["Successful"]) == 3 and not deleted.get("Failed")
    time.sleep(4)  # twice the visibility timeout: the span in which they would come back
    assert "Messages" not in client.receive_message(QueueUrl=url, WaitTimeSeconds=1)


def test_an_undeleted_message_comes_back_after_its_visibility_timeout(
    web: Web, tracked: tuple[str, str]
) -> None:
    _, url = tracked
    client = sqs(web, "worker")
    sent = client.send_message(QueueUrl=url, MessageBody="again")["MessageId"]
    [first] = receive_all(client, url, 1, **ALL)
    [second] = receive_all(client, url, 1, **ALL)  # after 2 s, from the tracker
    assert first["MessageId"] == second["MessageId"] == sent
    assert second["Attributes"]["ApproximateReceiveCount"] == "2"
    # Visibility 0 gives it back at once; the stale first handle deletes nothing.
    client.change_message_visibility(
        QueueUrl=url, ReceiptHandle=second["ReceiptHandle"], VisibilityTimeout=0
    )
    client.delete_message(QueueUrl=url, ReceiptHandle=first["ReceiptHandle"])
    [third] = receive_all(client, url, 1, **ALL)
    assert third["Attributes"]["ApproximateReceiveCount"] == "3"
    client.delete_message(QueueUrl=url, ReceiptHandle=third["ReceiptHandle"])


def test_a_forged_or_foreign_receipt_handle_is_refused(web: Web, tracked: tuple[str, str]) -> None:
    _, url = tracked
    client = sqs(web, "worker")
    refused = error_of(lambda: client.delete_message(QueueUrl=url, ReceiptHandle="not-a-handle"))
    assert refused == ("ReceiptHandleIsInvalid", 400)
    viewer = sqs(web, "watcher")
    assert error_of(lambda: viewer.receive_message(QueueUrl=url)) == ("AccessDenied", 403)
    too_many = error_of(lambda: client.receive_message(QueueUrl=url, MaxNumberOfMessages=11))
    assert too_many == ("InvalidParameterValue", 400)


def connections(port: int) -> int:
    """Established TCP connections to ``port`` (the web process's side)."""
    found = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            for line in list(lines)[1:]:
                local, state = line.split()[1], line.split()[3]
                found += state == "01" and int(local.rsplit(":", 1)[1], 16) == port
    return found


def web_threads(web: Web) -> int:
    with open(f"/proc/{web.pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("Threads:"))


def test_long_polls_hold_no_thread_and_return_when_a_message_comes(
    web: Web, tracked: tuple[str, str]
) -> None:
    _, url = tracked
    client = sqs(web, "worker")
    client.receive_message(QueueUrl=url, WaitTimeSeconds=1)  # the receiver started
    before = web_threads(web)
    answers: list[dict] = []
    shared = sqs(web, "worker", connections=100)

    def wait() -> None:
        answers.append(shared.receive_message(QueueUrl=url, WaitTimeSeconds=8))

    waiting = [threading.Thread(target=wait) for _ in range(100)]
    for thread in waiting:
        thread.start()
    wait_for(lambda: connections(web.port) >= 100, 15, "the hundred requests to be in")
    assert web_threads(web) <= before + 8, (before, web_threads(web))
    client.send_message(QueueUrl=url, MessageBody="wake one")
    wait_for(lambda: any("Messages" in a for a in answers), 15, "a waiter to get the message")
    assert [m["Body"] for a in answers for m in a.get("Messages", [])] == ["wake one"]
    for thread in waiting:
        thread.join(30)


def test_a_web_process_killed_with_messages_handed_out_loses_and_doubles_none(
    web: Web, tracked: tuple[str, str]
) -> None:
    _, url = tracked
    n = 20
    client = sqs(web, "worker")
    send(client, url, n)
    doomed, port = start_web(web.settings)
    try:
        other = sqs(web, "worker", port=port)
        handed = receive_all(other, url, 5)
    finally:
        kill9(doomed)
    counts = drained_once(client, url, n)
    assert {counts[m["Body"]] for m in handed} == {"2"}


def test_a_web_process_killed_holding_a_stock_loses_and_doubles_none(
    web: Web, tracked: tuple[str, str]
) -> None:
    """Receives that come together make the receiver settle more than they
    ask for (receivers.py's stock). Killed then, the process could not give
    its stock back unseen: what it held comes back after the visibility
    timeout as what it handed out does, once each, counted as a receive."""
    _, url = tracked
    n, at_once = 60, 8
    client = sqs(web, "worker")
    send(client, url, n)
    doomed, port = start_web(web.settings)
    try:
        other = sqs(web, "worker", port=port)
        handed = receive_all(other, url, 1)  # its receiver joined the group
        with ThreadPoolExecutor(at_once) as pool:
            for _ in range(3):
                asked = [
                    {"QueueUrl": url, "MaxNumberOfMessages": 2, "WaitTimeSeconds": 2}
                ] * at_once
                for answer in pool.map(lambda ask: other.receive_message(**ask), asked):
                    handed += answer.get("Messages", [])
    finally:
        kill9(doomed)
    counts = drained_once(client, url, n)
    assert {counts[m["Body"]] for m in handed} == {"2"}
    held = [body for body, count in counts.items() if count == "2"]
    assert len(held) > len(handed), "the receiver held no stock when it was killed"


@pytest.mark.parametrize("tracked", [30], indirect=True)
def test_slow_workers_receiving_together_each_do_a_message_once(
    web: Web, tracked: tuple[str, str]
) -> None:
    """Workers that take a while over each batch, their receives coming
    together now and then: the receiver stocks for them and gives back what
    they do not come for in time (a run here wrote 5 RETURN markers), to be
    handed out again. No message is worked on twice, none is counted as
    received more than once (none dead-lettered, then)."""
    _, url = tracked
    n, workers = 90, 3
    send(sqs(web, "worker"), url, n)
    done: Counter[str] = Counter()
    counts: set[str] = set()
    lock = threading.Lock()

    def work(seed: int) -> None:
        client = sqs(web, "worker")
        while True:
            with lock:
                if len(done) >= n:
                    return
            answer = client.receive_message(
                QueueUrl=url, MaxNumberOfMessages=5, WaitTimeSeconds=1, **ALL
            )
            messages = answer.get("Messages", [])
            time.sleep(0.2 + 0.3 * ((seed + len(messages)) % 3))  # the work itself: slow
            with lock:
                done.update(m["Body"] for m in messages)
                counts.update(m["Attributes"]["ApproximateReceiveCount"] for m in messages)
            for m in messages:
                client.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not any(thread.is_alive() for thread in threads), f"done {len(done)} of {n}"
    assert set(done) == {f"m{i}" for i in range(n)}
    assert max(done.values()) == 1, [b for b, c in done.items() if c > 1]
    assert counts == {"1"}


def send(client: Any, url: str, n: int) -> None:
    for i in range(0, n, 10):
        entries = [{"Id": f"m{j}", "MessageBody": f"m{j}"} for j in range(i, i + 10)]
        client.send_message_batch(QueueUrl=url, Entries=entries)


def drained_once(client: Any, url: str, n: int) -> dict[str, str]:
    """Receives and deletes m0..m{n-1}, after a kill: each comes once, none
    twice; each one's ApproximateReceiveCount."""
    received = Counter()
    counts = {}

    def drained() -> bool:
        answer = client.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=2, **ALL
        )
        for message in answer.get("Messages", []):
            received[message["Body"]] += 1
            counts[message["Body"]] = message["Attributes"]["ApproximateReceiveCount"]
            client.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        return len(received) == n

    wait_for(drained, 90, "every message after the kill", every=0)
    time.sleep(4)  # twice the visibility timeout: any double would have come by now
    drained()
    assert set(received) == {f"m{i}" for i in range(n)}
    assert max(received.values()) == 1, received  # each once after the kill
    return counts


def test_a_receives_own_visibility_timeout_holds_the_message_past_the_queues(
    web: Web, tracked: tuple[str, str]
) -> None:
    _, url = tracked  # the queue's visibility timeout: 2 s
    client = sqs(web, "worker")
    client.send_message(QueueUrl=url, MessageBody="longer")
    [first] = receive_all(client, url, 1, VisibilityTimeout=8)
    # Past the queue's 2 s, twice over: still invisible, the receive's 8 s hold.
    assert "Messages" not in client.receive_message(QueueUrl=url, WaitTimeSeconds=4)
    [again] = receive_all(client, url, 1, **ALL)
    assert again["MessageId"] == first["MessageId"]
    assert again["Attributes"]["ApproximateReceiveCount"] == "2"
    client.delete_message(QueueUrl=url, ReceiptHandle=again["ReceiptHandle"])


def test_records_of_other_producers_are_received_or_moved_aside_never_garbled(
    web: Web, kafka: EmbeddedBroker, tracked: tuple[str, str]
) -> None:
    name, url = tracked
    # Another producer's records, batched as Java's client batches them.
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers, "linger.ms": 20})
    producer.produce(name, b"\xff\xfe not text", key=b"k1", partition=0)
    producer.produce(
        name, "from java ✓".encode(), key=b"k2", partition=0, headers=[("traceparent", b"00-ab")]
    )
    producer.flush(10)
    client = sqs(web, "worker")
    [message] = receive_all(client, url, 1, **ALL)
    assert message["Body"] == "from java ✓"
    assert message["MessageId"] == message_id(f"{name}/0/1")  # named by its coordinates
    assert "MessageAttributes" not in message  # a foreign header is no typed attribute
    client.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    config = QueueConfig(kafka.bootstrap_servers, name, f"{name}-workers")
    [letter] = wait_for(
        lambda: read_all(config, config.dlq_topic, partitions=6), 30, "the unreadable in the DLQ"
    )
    assert letter.value() == b"\xff\xfe not text"
    assert b"UTF-8" in dict(letter.headers())[h.DLQ_DETAIL]


def test_a_short_poll_of_a_queue_no_one_received_from_lately_gets_its_message(
    web: Web, tracked: tuple[str, str]
) -> None:
    """The receiver's client is made by that poll and joins its group first:
    before, the poll answered nothing after 0.4 s, and so did every later
    one spaced past the receiver's idle close (moto's conformance tests)."""
    _, url = tracked
    client = sqs(web, "worker")
    sent = client.send_message(QueueUrl=url, MessageBody="waiting")["MessageId"]
    got = client.receive_message(QueueUrl=url)  # WaitTimeSeconds 0: a short poll
    assert [m["MessageId"] for m in got.get("Messages", [])] == [sent]
    # Joined now, its short polls are short again: one does not wait on
    # for a message sent while it would still be warming up.
    later = threading.Timer(2.0, lambda: client.send_message(QueueUrl=url, MessageBody="later"))
    later.start()
    try:
        assert "Messages" not in client.receive_message(QueueUrl=url)
    finally:
        later.join()
