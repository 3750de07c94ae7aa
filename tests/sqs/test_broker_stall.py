"""The SQS endpoint through a broker that stalls (SIGSTOP, as a broker in a
long GC pause or behind a network partition) and resumes.

While it is stalled, SendMessageBatch, ReceiveMessage and DeleteMessageBatch
each get an answer, never a 500 and never a hang: what they did, or SQS's
ServiceUnavailable with the reason. Once it resumes the same clients carry
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
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueConfig, RedeliveryTracker
from tests.process import kill9, wait_for
from tests.sqs.clients import Web, receive_all, sqs
from tests.sqs.conftest import set_up, start_web

# Longer than the group takes to move after the stall (its members' sessions
# time out and they join again): a message started but not committed when
# the broker stopped is read again by then. With a shorter one the tracker
# redelivers it first, and it is received twice: at least once, as documented.
VISIBILITY_S = 15
STALL_S = 8  # past the endpoint's probe of Kafka (1.5 s) and the tracker's transactions (4 s)
ANSWER_S = 45  # a request waits for the broker at most this long: 30 s flushes, and more


def test_a_stalled_broker_gets_answers_not_500s_and_loses_no_message(
    own_broker: EmbeddedBroker, tmp_path: Path
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
        QueueName=name, Attributes={"VisibilityTimeout": str(VISIBILITY_S)}
    )["QueueUrl"]
    tracker = RedeliveryTracker(QueueConfig(own_broker.bootstrap_servers, name, f"{name}-workers"))
    tracker.start()
    client = sqs(web, "worker")
    try:
        sent = send(client, url, "before", 30)
        handed = receive_all(client, url, 10)  # left undeleted: in flight through the stall
        assert own_broker.process is not None
        os.kill(own_broker.process.pid, signal.SIGSTOP)
        try:
            during = stalled_requests(client, url, handed[0]["ReceiptHandle"])
        finally:
            os.kill(own_broker.process.pid, signal.SIGCONT)
        sent |= send(client, url, "after", 10)
        deleted = drain(client, url, sent | during.pop("sent"))
    finally:
        tracker.stop()
        kill9(process)
    for what, (outcome, seconds) in during.items():
        assert outcome in ("ok", "ServiceUnavailable"), (what, outcome)
        assert seconds < ANSWER_S, (what, seconds)
    assert sent <= set(deleted), f"lost: {sorted(sent - set(deleted))[:5]}"
    assert {b for b in deleted if not b.startswith(("before", "after"))} <= STALLED
    assert max(deleted.values()) == 1, "a message came back after its delete was answered"
    # Handed out before the stall and not deleted: each came back and was
    # deleted, but the one deleted during the stall, if that was answered.
    undeleted = {m["Body"] for m in handed[1:]}
    assert undeleted <= set(deleted)
    if during["delete"][0] == "ok":
        assert handed[0]["Body"] not in deleted


STALLED = {f"stalled{j}" for j in range(10)}


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


def stalled_requests(client: Any, url: str, handle: str) -> dict[str, Any]:
    """A send, a receive and a delete (of ``handle``'s message) while the
    broker is stopped: how each
    ended and how long it took to be answered; and under "sent", the
    bodies the send was told were sent."""
    started = time.monotonic()
    time.sleep(2)  # past the endpoint's last look at Kafka: it looks again
    sent: set[str] = set()
    during: dict[str, Any] = {
        "send": timed(lambda: sent.update(send(client, url, "stalled", 10))),
        "receive": timed(
            lambda: client.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        ),
        "delete": timed(lambda: client.delete_message(QueueUrl=url, ReceiptHandle=handle)),
    }
    left = STALL_S - (time.monotonic() - started)
    if left > 0:
        time.sleep(left)  # the stall's length itself, not a wait for a condition
    return {**during, "sent": sent}


def timed(call: Any) -> tuple[str, float]:
    """How ``call`` ended ("ok" or the SQS error code) and its seconds."""
    started = time.monotonic()
    try:
        call()
    except ClientError as exc:
        return exc.response["Error"]["Code"], time.monotonic() - started
    return "ok", time.monotonic() - started


def drain(client: Any, url: str, sent: set[str]) -> Counter:
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
    quiet_until = time.monotonic() + VISIBILITY_S + 2
    while time.monotonic() < quiet_until:
        once()
    return deleted
