"""PurgeQueue moves the queue topic's first offset to its end: no message
sent before it is received again, waiting or in flight, while messages
sent after are; a second purge within the minute is refused as SQS
refuses it; only an admin may purge."""

import uuid

from tests.process import wait_for
from tests.sqs.clients import Web, counts, error_of, receive_all, sqs


def test_purged_messages_waiting_or_in_flight_never_come_back_and_new_ones_do(
    web: Web, tracked: tuple[str, str]
) -> None:
    _, url = tracked
    worker, boss = sqs(web, "worker"), sqs(web, "boss")
    for i in range(7):
        worker.send_message(QueueUrl=url, MessageBody=f"old {i}")
    in_flight = receive_all(worker, url, 2)  # not deleted: they would come back in 2 s
    boss.purge_queue(QueueUrl=url)
    # The in-flight ones fall due on the tracker, which finds them gone.
    wait_for(lambda: counts(worker, url) == (0, 0), 60, "the purged queue empty", 0.5)
    worker.send_message(QueueUrl=url, MessageBody="new")
    got = receive_all(worker, url, 1)
    assert [m["Body"] for m in got] == ["new"], (in_flight, got)
    worker.delete_message(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"])
    late = worker.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=3)
    assert late.get("Messages", []) == []


def test_a_second_purge_within_the_minute_and_an_operators_are_refused(web: Web) -> None:
    boss = sqs(web, "boss", "query")
    url = boss.create_queue(QueueName=f"purge-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    assert error_of(lambda: sqs(web, "worker", "query").purge_queue(QueueUrl=url)) == (
        "AccessDenied",
        403,
    )
    boss.purge_queue(QueueUrl=url)
    assert error_of(lambda: boss.purge_queue(QueueUrl=url)) == (
        "AWS.SimpleQueueService.PurgeQueueInProgress",
        403,
    )
