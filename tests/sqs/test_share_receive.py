"""SQS receives on a share-group queue (KIP-932): the broker locks each
message for the queue's VisibilityTimeout and redelivers it after, the web
process that received it deletes it, holds it longer for slow work, or
gives it back; a handle another web process hands in is refused, saying
why, and the message is not lost."""

import threading
import time
import uuid
from collections.abc import Iterator

import pytest

from tests.process import kill9, manage
from tests.sqs.clients import Web, error_of, receive_all, sqs
from tests.sqs.conftest import start_web

SHARE_QUEUE = """
from kmqadmin.console.models import Cluster, Queue
queue = Queue.objects.create(
    cluster=Cluster.objects.get(), topic={name!r}, group_id={name!r} + "-workers",
    backend="share", message_timeout_ms=2000, partitions=2,
)
queue.config().ensure_topics(queue.partitions)
"""


@pytest.fixture
def share_url(web: Web) -> str:
    """A share queue registered in the console, 2 s locks, two partitions."""
    name = f"shared-{uuid.uuid4().hex[:8]}"
    made = manage("shell", "-c", SHARE_QUEUE.format(name=name), **web.settings)
    assert made.returncode == 0, made.stderr
    return f"{web.base}/{name}"


def test_deleted_messages_never_return_and_the_others_come_back_after_the_lock(
    web: Web, share_url: str
) -> None:
    client = sqs(web, "worker")
    sent = {
        client.send_message(QueueUrl=share_url, MessageBody=f"m{i}")["MessageId"] for i in range(6)
    }
    got = receive_all(client, share_url, 6, MessageSystemAttributeNames=["All"])
    assert {m["MessageId"] for m in got} == sent
    assert {m["Attributes"]["ApproximateReceiveCount"] for m in got} == {"1"}
    deleted, kept = got[:4], got[4:]
    entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(deleted)]
    answer = client.delete_message_batch(QueueUrl=share_url, Entries=entries)
    assert len(answer["Successful"]) == 4 and answer.get("Failed", []) == []
    back = receive_all(client, share_url, 2, MessageSystemAttributeNames=["All"])
    assert {m["MessageId"] for m in back} == {m["MessageId"] for m in kept}
    assert {m["Attributes"]["ApproximateReceiveCount"] for m in back} == {"2"}
    for message in back:
        client.delete_message(QueueUrl=share_url, ReceiptHandle=message["ReceiptHandle"])
    late = client.receive_message(QueueUrl=share_url, MaxNumberOfMessages=10, WaitTimeSeconds=4)
    assert late.get("Messages", []) == []


def test_slow_work_held_by_visibility_changes_is_done_once(web: Web, share_url: str) -> None:
    """Held three locks long while another worker long-polls the queue: the
    other never gets it, and once deleted it never comes back."""
    client, other = sqs(web, "worker"), sqs(web, "worker")
    client.send_message(QueueUrl=share_url, MessageBody="slow")
    [message] = receive_all(client, share_url, 1)
    stolen: list[dict] = []
    stop = threading.Event()

    def poll_meanwhile() -> None:
        while not stop.is_set():
            got = other.receive_message(QueueUrl=share_url, WaitTimeSeconds=1)
            stolen.extend(got.get("Messages", []))

    thief = threading.Thread(target=poll_meanwhile)
    thief.start()
    try:
        held_until = time.monotonic() + 6
        while time.monotonic() < held_until:  # the work, renewing its lock each second
            client.change_message_visibility(
                QueueUrl=share_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=2
            )
            time.sleep(1)  # the slow work itself
        client.delete_message(QueueUrl=share_url, ReceiptHandle=message["ReceiptHandle"])
        time.sleep(3)  # past a lock after the delete: it would be back by now
    finally:
        stop.set()
        thief.join()
    assert stolen == []


def test_visibility_zero_gives_it_back_at_once_and_more_than_the_lock_is_refused(
    web: Web, share_url: str
) -> None:
    client = sqs(web, "worker")
    client.send_message(QueueUrl=share_url, MessageBody="again")
    [first] = receive_all(client, share_url, 1)
    too_long = lambda: client.change_message_visibility(  # noqa: E731
        QueueUrl=share_url, ReceiptHandle=first["ReceiptHandle"], VisibilityTimeout=30
    )
    assert error_of(too_long) == ("InvalidParameterValue", 400)
    client.change_message_visibility(
        QueueUrl=share_url, ReceiptHandle=first["ReceiptHandle"], VisibilityTimeout=0
    )
    [again] = receive_all(client, share_url, 1, MessageSystemAttributeNames=["All"])
    assert again["MessageId"] == first["MessageId"]
    assert again["Attributes"]["ApproximateReceiveCount"] == "2"
    client.delete_message(QueueUrl=share_url, ReceiptHandle=again["ReceiptHandle"])


@pytest.fixture
def second_web(web: Web) -> Iterator[int]:
    process, port = start_web(web.settings)
    try:
        yield port
    finally:
        kill9(process)


def test_a_handle_taken_to_another_web_process_is_refused_and_the_message_kept(
    web: Web, share_url: str, second_web: int
) -> None:
    here, there = sqs(web, "worker"), sqs(web, "worker", port=second_web)
    here.send_message(QueueUrl=share_url, MessageBody="mine")
    [message] = receive_all(here, share_url, 1)
    delete = lambda client: client.delete_message(  # noqa: E731
        QueueUrl=share_url, ReceiptHandle=message["ReceiptHandle"]
    )
    assert error_of(lambda: delete(there)) == ("ReceiptHandleIsInvalid", 400)
    delete(here)
    late = here.receive_message(QueueUrl=share_url, WaitTimeSeconds=4)
    assert late.get("Messages", []) == []
