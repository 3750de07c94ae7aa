"""The SQS endpoint through a broker that stalls (SIGSTOP, as a broker in a
long GC pause or behind a network partition) and resumes, or is killed
(kill -9) and started again on its data.

While it is away, SendMessageBatch, ReceiveMessage and DeleteMessageBatch
each get an answer, never a 500 and never a hang: what they did, or SQS's
ServiceUnavailable with the reason. Once it is back the same clients carry
on, and every message a client was told was sent is received and deleted:
nothing lost. One told "unconfirmed" may be on the queue or not, as the
answer says. A message whose delete was answered never comes back, and one
handed out and not deleted comes back once, after its visibility timeout.
"""

import os
import signal
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueConfig, RedeliveryTracker
from tests.process import kill9, wait_for
from tests.sqs.clients import Web, receive_all, sqs
from tests.sqs.conftest import set_up, start_web

OUTAGE_S = 8  # past the endpoint's probe of Kafka (1.5 s) and the tracker's transactions (4 s)
ANSWER_S = 45  # a request waits for the broker at most this long: 30 s flushes, and more


def stall(broker: EmbeddedBroker) -> None:
    assert broker.process is not None
    os.kill(broker.process.pid, signal.SIGSTOP)


def resume(broker: EmbeddedBroker) -> None:
    assert broker.process is not None
    os.kill(broker.process.pid, signal.SIGCONT)


def kill(broker: EmbeddedBroker) -> None:
    assert broker.process is not None
    kill9(broker.process)


def restart(broker: EmbeddedBroker) -> None:
    """On the same port and data: what it acknowledged before it died is there."""
    broker.start()


@dataclass(frozen=True)
class Outage:
    away: Callable[[EmbeddedBroker], None]
    back: Callable[[EmbeddedBroker], None]
    # Longer than the outage and the group's move after it (its members'
    # sessions time out and they join again): a message polled as the broker
    # went away has a start marker stamped then, and is read again by the
    # next member once the group has moved. Were its visibility timeout over
    # by then, the tracker would have redelivered it first, and it would be
    # received twice: at least once, as docs/sqs.md says.
    visibility_s: int


OUTAGES = {
    "stalled": Outage(stall, resume, visibility_s=15),
    "killed": Outage(kill, restart, visibility_s=30),  # a restart takes a while more
}


@pytest.mark.parametrize("outage", OUTAGES.values(), ids=OUTAGES.keys())
def test_a_broker_away_gets_answers_not_500s_and_loses_no_message(
    own_broker: EmbeddedBroker, tmp_path: Path, outage: Outage
) -> None:
    settings = {
        "KMQ_DATA_DIR": str(tmp_path),
        "KAFKA_BOOTSTRAP_SERVERS": own_broker.bootstrap_servers,
    }
    keys = set_up(settings, [])
    process, port = start_web(settings)
    web = Web(port, keys, tmp_path / "web.log", settings, process.pid)
    name = f"stall-{uuid.uuid4().hex[:8]}"
    url = sqs(web, "boss").create_queue(
        QueueName=name, Attributes={"VisibilityTimeout": str(outage.visibility_s)}
    )["QueueUrl"]
    tracker = RedeliveryTracker(QueueConfig(own_broker.bootstrap_servers, name, f"{name}-workers"))
    tracker.start()
    client = sqs(web, "worker")
    try:
        sent = send(client, url, "before", 30)
        handed = receive_all(client, url, 10)  # left undeleted: in flight through the outage
        outage.away(own_broker)
        try:
            during = requests_while_away(client, url, handed[0]["ReceiptHandle"])
        finally:
            outage.back(own_broker)
        sent |= send(client, url, "after", 10)
        deleted = drain(client, url, sent | during.pop("sent"), outage.visibility_s)
    finally:
        tracker.stop()
        kill9(process)
    for what, (outcome, seconds) in during.items():
        assert outcome in ("ok", "ServiceUnavailable"), (what, outcome)
        assert seconds < ANSWER_S, (what, seconds)
    assert sent <= set(deleted), f"lost: {sorted(sent - set(deleted))[:5]}"
    assert {b for b in deleted if not b.startswith(("before", "after"))} <= DURING
    assert max(deleted.values()) == 1, "a message came back after its delete was answered"
    # Handed out before the outage and not deleted: each came back and was
    # deleted, but the one deleted during the outage, if that was answered.
    undeleted = {m["Body"] for m in handed[1:]}
    assert undeleted <= set(deleted)
    if during["delete"][0] == "ok":
        assert handed[0]["Body"] not in deleted


DURING = {f"during{j}" for j in range(10)}


def send(client: Any, url: str, tag: str, n: int) -> set[str]:
    """``n`` messages in batches of 10: the bodies confirmed sent. An entry
    answered in Failed must be ServiceUnavailable (written or not)."""
    confirmed = set()
    for i in range(0, n, 10):
        entries = [{"Id": f"{tag}{j}", "MessageBody": f"{tag}{j}"} for j in range(i, i + 10)]
        answer = client.send_message_batch(QueueUrl=url, Entries=entries)
        confirmed |= {s["Id"] for s in answer.get("Successful", [])}
        assert all(f["Code"] == "ServiceUnavailable" for f in answer.get("Failed", [])), answer
    return confirmed


def requests_while_away(client: Any, url: str, handle: str) -> dict[str, Any]:
    """A send, a receive and a delete (of ``handle``'s message) while the
    broker is away: how each ended and how long it took to be answered;
    and under "sent", the bodies the send was told were sent."""
    started = time.monotonic()
    time.sleep(2)  # past the endpoint's last look at Kafka: it looks again
    sent: set[str] = set()
    during: dict[str, Any] = {
        "send": timed(lambda: sent.update(send(client, url, "during", 10))),
        "receive": timed(
            lambda: client.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        ),
        "delete": timed(lambda: client.delete_message(QueueUrl=url, ReceiptHandle=handle)),
    }
    left = OUTAGE_S - (time.monotonic() - started)
    if left > 0:
        time.sleep(left)  # the outage's length itself, not a wait for a condition
    return {**during, "sent": sent}


def timed(call: Any) -> tuple[str, float]:
    """How ``call`` ended ("ok" or the SQS error code) and its seconds."""
    started = time.monotonic()
    try:
        call()
    except ClientError as exc:
        return exc.response["Error"]["Code"], time.monotonic() - started
    return "ok", time.monotonic() - started


def drain(client: Any, url: str, sent: set[str], visibility_s: int) -> Counter:
    """Receive and delete until every sent message is deleted, then a
    visibility timeout more: a message that comes back then is counted."""
    deleted: Counter = Counter()

    def once() -> bool:
        answer = client.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1, AttributeNames=["All"]
        )
        messages = answer.get("Messages", [])

        if messages:
            entries = [
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)
            ]
            result = client.delete_message_batch(QueueUrl=url, Entries=entries)
            assert not result.get("Failed"), result
            deleted.update(m["Body"] for m in messages)
        return sent <= set(deleted)

    wait_for(once, 120, "every sent message deleted", every=0)
    quiet_until = time.monotonic() + visibility_s + 2
    while time.monotonic() < quiet_until:
        once()
    return deleted
