"""`kmq run` registers its embedded broker as cluster "local": an SQS client
works with nothing done in the console, across a restart on another port;
and `kmq cluster` from a shell beside it lists it, and refuses an
unreachable cluster with one line and a non-zero exit."""

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kmqadmin.kafka.embedded.broker import free_port
from tests.process import Run, manage, wait_for
from tests.sqs.clients import Web, sqs


def test_sqs_clients_need_no_console_step_and_local_follows_the_brokers_port(
    tmp_path: Path,
) -> None:
    first = _settings(tmp_path)
    with _running(first) as web:
        made = manage("kmq", "sqs-key", "create", "admin", **first)
        assert made.returncode == 0, made.stderr
        keys = {"admin": dict(line.split("=", 1) for line in made.stdout.splitlines())}
        client = sqs(web(keys), "admin")
        _served(client, client.create_queue(QueueName="jobs")["QueueUrl"], first)
        nowhere = f"127.0.0.1:{free_port()}"
        added = manage("kmq", "cluster", "add", "gone", "--bootstrap-servers", nowhere, **first)
        assert added.returncode == 1
        assert added.stderr.splitlines() == [
            f"CommandError: cluster gone not saved: no broker at {nowhere} answered within "
            "5 s; check --bootstrap-servers and that this machine reaches it"
        ]
    moved = _settings(tmp_path)
    with _running(moved) as web:
        client = sqs(web(keys), "admin")
        _served(client, client.get_queue_url(QueueName="jobs")["QueueUrl"], moved)


def _settings(data_dir: Path) -> dict[str, str]:
    """The run's settings on ``data_dir``, the broker on a port of its own."""
    return {
        "KMQ_DATA_DIR": str(data_dir),
        "KMQ_EMBEDDED_KAFKA_PORT": str(free_port()),
        "KMQ_WORKER_METRICS_PORT": "0",
    }


@contextlib.contextmanager
def _running(settings: dict[str, str]) -> Iterator[Any]:
    """`kmq run --no-demo` on ``settings``, up; yields its web, given the SQS keys."""
    port = free_port()
    run = Run("--no-demo", "--port", str(port), **settings)
    try:
        run.up()
        log = Path(settings["KMQ_DATA_DIR"]) / "run.log"
        yield lambda keys: Web(port, keys, log, settings, run.proc.pid)
    finally:
        code = run.stop()
    assert code == 0, "".join(run.lines)


def _served(client: Any, url: str, settings: dict[str, str]) -> None:
    """A message goes through the queue, and `kmq cluster list` from a shell
    beside the run shows "local" on the run's broker, alone."""
    body = f"through the broker on {settings['KMQ_EMBEDDED_KAFKA_PORT']}"
    client.send_message(QueueUrl=url, MessageBody=body)
    answer = wait_for(
        lambda: client.receive_message(QueueUrl=url, WaitTimeSeconds=2).get("Messages"),
        60,
        "the message",
        every=0,
    )
    assert [m["Body"] for m in answer] == [body]
    client.delete_message(QueueUrl=url, ReceiptHandle=answer[0]["ReceiptHandle"])
    bootstrap = f"127.0.0.1:{settings['KMQ_EMBEDDED_KAFKA_PORT']}"
    assert _listed(settings) == [["local", bootstrap, "PLAINTEXT"]]


def _listed(settings: dict[str, str]) -> list[list[str]]:
    """`kmq cluster list`'s rows, from a shell beside the run."""
    listed = manage("kmq", "cluster", "list", **settings)
    assert listed.returncode == 0, listed.stderr
    return [line.split() for line in listed.stdout.splitlines()[1:]]
