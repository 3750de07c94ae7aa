"""Message move tasks (SQS's DLQ redrive) as production runs them: the web
process takes the request, the product's Celery worker (which also hosts
every queue's tracker) runs the job. Dead letters go back to the queue they
came from with a fresh receive count, or to a destination; one task per
source at a time; a cancelled task stops; a worker killed with -9 mid-move
loses no message, and the next task moves what the first did not."""

import json
import subprocess
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from confluent_kafka import Producer

from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueConfig
from kmqadmin.kmq import headers as h
from tests.kafka_helpers import read_all
from tests.process import celery_worker, kill9, spawn, wait_for
from tests.sqs.clients import Web, counts, error_of, receive_all, sqs
from tests.sqs.conftest import set_up, start_web

ARN = "arn:aws:sqs:us-east-1:000000000000:{}"


@dataclass(frozen=True)
class Stack:
    web: Web
    settings: dict[str, str]

    def worker(self) -> subprocess.Popen:
        log = Path(self.settings["KMQ_DATA_DIR"]) / "worker.log"
        return spawn(celery_worker("--pool", "solo", "--loglevel", "INFO"), log, **self.settings)


@pytest.fixture(scope="module")
def stack(kafka: EmbeddedBroker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A web process and the product's worker on a data dir of their own:
    the worker hosts a tracker for every queue registered there."""
    data = tmp_path_factory.mktemp("sqs-move")
    settings = {
        "KMQ_DATA_DIR": str(data),
        "KAFKA_BOOTSTRAP_SERVERS": kafka.bootstrap_servers,
        "KMQ_SERVICES_REFRESH_S": "1",
    }
    keys = set_up(settings, [])  # a worker here hosts a tracker per registered queue
    process, port = start_web(settings)
    try:
        yield Stack(Web(port, keys, data / "web.log", settings, process.pid), settings)
    finally:
        kill9(process)


@pytest.fixture
def worker(stack: Stack) -> Iterator[subprocess.Popen]:
    proc = stack.worker()
    try:
        yield proc
    finally:
        kill9(proc)


def dead_lettered(stack: Stack, count: int) -> tuple[str, str, dict[str, str]]:
    """A queue whose ``count`` messages were each received once and never
    deleted: with maxReceiveCount 1 the tracker moved them all to its DLQ.
    Its URL, the DLQ's URL, and each message's body by MessageId."""
    boss, stem = sqs(stack.web, "boss"), f"mv-{uuid.uuid4().hex[:6]}"
    # Its visibility timeout is how soon a killed move job's batch comes back.
    dlq = boss.create_queue(QueueName=f"{stem}-dlq", Attributes={"VisibilityTimeout": "2"})[
        "QueueUrl"
    ]
    policy = json.dumps({"deadLetterTargetArn": ARN.format(f"{stem}-dlq"), "maxReceiveCount": 1})
    url = boss.create_queue(
        QueueName=stem, Attributes={"VisibilityTimeout": "1", "RedrivePolicy": policy}
    )["QueueUrl"]
    client = sqs(stack.web, "worker")
    sent = {}
    for i in range(0, count, 10):
        entries = [
            {"Id": f"m{j}", "MessageBody": f"body {j}"} for j in range(i, min(i + 10, count))
        ]
        answer = client.send_message_batch(QueueUrl=url, Entries=entries)
        sent |= {e["MessageId"]: f"body {e['Id'][1:]}" for e in answer["Successful"]}
    receive_all(client, url, count)  # and never deleted
    wait_for(lambda: counts(client, dlq)[0] == count, 60, f"{count} dead letters", 0.5)
    return url, dlq, sent


def test_a_move_task_sends_dead_letters_back_to_their_queue_fresh(
    stack: Stack, worker: subprocess.Popen
) -> None:
    url, dlq, sent = dead_lettered(stack, 25)
    dlq_name = dlq.rsplit("/", 1)[1]
    operator, dlq_arn = sqs(stack.web, "worker"), ARN.format(dlq_name)
    # Another producer's record in the DLQ, batched as Java's client does:
    # it came from no queue, so it has nowhere to go back to.
    bootstrap = stack.settings["KAFKA_BOOTSTRAP_SERVERS"]
    foreign = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    foreign.produce(dlq_name, b"written straight into the DLQ", key=b"java")
    assert foreign.flush(10) == 0
    wait_for(lambda: counts(operator, dlq)[0] == 26, 30, "the foreign record counted", 0.5)
    # 5 a second: still running when the second start comes.
    handle = operator.start_message_move_task(SourceArn=dlq_arn, MaxNumberOfMessagesPerSecond=5)[
        "TaskHandle"
    ]
    refused = error_of(lambda: operator.start_message_move_task(SourceArn=dlq_arn))
    assert refused[0].endswith("UnsupportedOperation")  # one task per source at a time
    task = wait_for(lambda: _ended(operator, dlq_arn), 60, "the task to end", 0.5)
    assert task["Status"] == "COMPLETED" and "TaskHandle" not in task
    assert (
        task["ApproximateNumberOfMessagesMoved"],
        task["ApproximateNumberOfMessagesToMove"],
    ) == (
        25,
        26,
    )
    back = receive_all(operator, url, 25, AttributeNames=["ApproximateReceiveCount"])
    assert {m["MessageId"]: m["Body"] for m in back} == sent  # the same messages, each once
    assert {m["Attributes"]["ApproximateReceiveCount"] for m in back} == {"1"}
    assert counts(operator, dlq)[0] == 0
    # The foreign record is moved aside, to the DLQ's own DLQ, with the reason.
    config = QueueConfig(bootstrap, dlq_name, f"{dlq_name}-workers")
    [letter] = wait_for(
        lambda: read_all(config, config.dlq_topic, partitions=6), 60, "the foreign record aside"
    )
    assert letter.value() == b"written straight into the DLQ"
    assert b"no queue to move it to" in dict(letter.headers())[h.DLQ_DETAIL]
    assert error_of(lambda: operator.cancel_message_move_task(TaskHandle=handle)) == (
        "ResourceNotFoundException",
        400,
    )  # it is no longer running


def test_a_move_task_with_a_destination_sends_every_letter_there(
    stack: Stack, worker: subprocess.Popen
) -> None:
    _, dlq, sent = dead_lettered(stack, 5)
    boss, operator = sqs(stack.web, "boss"), sqs(stack.web, "worker")
    elsewhere = f"elsewhere-{uuid.uuid4().hex[:6]}"
    url = boss.create_queue(QueueName=elsewhere)["QueueUrl"]
    dlq_arn = ARN.format(dlq.rsplit("/", 1)[1])
    operator.start_message_move_task(SourceArn=dlq_arn, DestinationArn=ARN.format(elsewhere))
    task = wait_for(lambda: _ended(operator, dlq_arn), 60, "the task to end", 0.5)
    assert task["DestinationArn"] == ARN.format(elsewhere)
    assert (task["Status"], task["ApproximateNumberOfMessagesMoved"]) == ("COMPLETED", 5)
    got = receive_all(operator, url, 5)
    assert {m["MessageId"]: m["Body"] for m in got} == sent


def test_a_move_task_asks_a_dead_letter_queue_and_a_known_destination(stack: Stack) -> None:
    operator, boss = sqs(stack.web, "worker"), sqs(stack.web, "boss")
    plain = f"plain-{uuid.uuid4().hex[:6]}"
    boss.create_queue(QueueName=plain)
    assert error_of(lambda: operator.start_message_move_task(SourceArn=ARN.format(plain))) == (
        "InvalidParameterValue",
        400,
    )
    missing = ARN.format("no-such-queue")
    assert error_of(lambda: operator.start_message_move_task(SourceArn=missing)) == (
        "ResourceNotFoundException",
        400,
    )
    nowhere = lambda: operator.start_message_move_task(  # noqa: E731
        SourceArn=ARN.format(plain), DestinationArn=missing
    )
    assert error_of(nowhere) == ("ResourceNotFoundException", 400)
    assert error_of(
        lambda: sqs(stack.web, "watcher").start_message_move_task(SourceArn=missing)
    ) == (
        "AccessDenied",
        403,
    )
    assert operator.list_message_move_tasks(SourceArn=ARN.format(plain))["Results"] == []


def test_a_worker_killed_mid_move_loses_nothing_and_the_next_task_moves_the_rest(
    stack: Stack,
) -> None:
    """Moved 20 a second, the worker is killed -9 once some are back. Its
    task is given up as failed when its heartbeat stops; the batch it held
    comes back to the DLQ after the DLQ's visibility timeout, and the next
    tasks (on a new worker) move the rest. Every message is on its queue;
    only the batch in flight at the kill may be there twice (at-least-once,
    as SQS's moves are)."""
    first = stack.worker()
    try:
        url, dlq, sent = dead_lettered(stack, 60)
        operator, dlq_arn = sqs(stack.web, "worker"), ARN.format(dlq.rsplit("/", 1)[1])
        operator.start_message_move_task(SourceArn=dlq_arn, MaxNumberOfMessagesPerSecond=20)
        wait_for(
            lambda: _latest(operator, dlq_arn)["ApproximateNumberOfMessagesMoved"] >= 10,
            60,
            "some moved",
            0.2,
        )
    finally:
        kill9(first)
    dead = wait_for(lambda: _ended(operator, dlq_arn), 60, "the dead task given up", 1)
    assert dead["Status"] == "FAILED" and "no heartbeat" in dead["FailureReason"]
    second = stack.worker()
    try:
        # A task at one a second, cancelled once it moves: it stops short.
        slow = operator.start_message_move_task(SourceArn=dlq_arn, MaxNumberOfMessagesPerSecond=1)
        wait_for(
            lambda: _latest(operator, dlq_arn)["ApproximateNumberOfMessagesMoved"] >= 1,
            60,
            "the slow task moving",
            0.5,
        )
        operator.cancel_message_move_task(TaskHandle=slow["TaskHandle"])
        cancelled = wait_for(
            lambda: (t := _latest(operator, dlq_arn))["Status"] == "CANCELLED" and t,
            30,
            "it cancelled",
            0.5,
        )
        assert (
            cancelled["ApproximateNumberOfMessagesMoved"]
            < cancelled["ApproximateNumberOfMessagesToMove"]
        )
        wait_for(lambda: _moved_all(operator, dlq, dlq_arn), 120, "the DLQ moved", 1)
        got = receive_all(operator, url, len(sent))
        late = operator.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=2)
        got += late.get("Messages", [])
    finally:
        kill9(second)
    counts = Counter(m["MessageId"] for m in got)
    assert set(counts) == set(sent)  # none lost
    assert sum(counts.values()) - len(sent) <= 20  # only the batch in flight at the kill again


def _latest(client, arn: str) -> dict:
    return client.list_message_move_tasks(SourceArn=arn)["Results"][0]


def _ended(client, arn: str) -> dict | None:
    """The source's latest task, once it no longer runs."""
    tasks = client.list_message_move_tasks(SourceArn=arn)["Results"]
    return tasks[0] if tasks and tasks[0]["Status"] != "RUNNING" else None


def _moved_all(client, url: str, arn: str) -> bool:
    """Whether the DLQ is empty, in flight too; a task started whenever none
    runs and some wait (a killed job's batch comes back after a while)."""
    waiting, in_flight = counts(client, url)
    if waiting and _latest(client, arn)["Status"] != "RUNNING":
        client.start_message_move_task(SourceArn=arn)
    return waiting == in_flight == 0 and _latest(client, arn)["Status"] != "RUNNING"
