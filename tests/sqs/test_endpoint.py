"""The SQS endpoint in a real web process (daphne, as `make run` serves it),
driven by boto3 over TCP: its keys made with `kmq sqs-key`, its queues the
console's, its signatures verified, its roles applied, and Django still
serving everything else."""

import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from kmqadmin.kafka.embedded.broker import EmbeddedBroker, free_port
from tests.process import ROOT, env, kill9, manage, wait_for

DAPHNE = [sys.executable, "-m", "daphne", "-b", "127.0.0.1"]
SETUP = """
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from kmqadmin.console.models import Cluster, Queue
cluster = Cluster.objects.create(name="local")
for topic in ("orders-a", "orders-b", "payments"):
    Queue.objects.create(cluster=cluster, topic=topic, group_id=topic + "-workers", partitions=1)
users = get_user_model().objects
users.create_user("watcher").groups.add(Group.objects.get(name="viewer"))
users.create_user("stranger")
"""


@pytest.fixture(scope="module")
def web(kafka: EmbeddedBroker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    data = tmp_path_factory.mktemp("sqs-web")
    settings = {"KMQ_DATA_DIR": str(data), "KAFKA_BOOTSTRAP_SERVERS": kafka.bootstrap_servers}
    assert manage("migrate", **settings).returncode == 0
    setup = manage("shell", "-c", SETUP, **settings)
    assert setup.returncode == 0, setup.stderr
    keys = {}
    for username in ("watcher", "stranger"):
        made = manage("kmq", "sqs-key", "create", username, **settings)
        assert made.returncode == 0, made.stderr
        keys[username] = dict(line.split("=", 1) for line in made.stdout.splitlines())
    port = free_port()
    log = Path(data) / "web.log"
    with open(log, "ab") as out:
        daphne = subprocess.Popen(
            [*DAPHNE, "-p", str(port), "kmqadmin.asgi:application"],
            cwd=ROOT,
            env=env(**settings),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for(lambda: status(f"http://127.0.0.1:{port}/sqs") == 403, 60, "the endpoint")
        yield {"port": port, "keys": keys, "log": log}
    finally:
        kill9(daphne)


def status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return answer.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return None


def sqs(web: dict, user: str = "watcher", path: str = "/sqs", secret: str | None = None):
    key = web["keys"][user]
    return boto3.client(
        "sqs",
        endpoint_url=f"http://127.0.0.1:{web['port']}{path}",
        region_name="eu-west-3",
        aws_access_key_id=key["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=secret or key["AWS_SECRET_ACCESS_KEY"],
        config=Config(retries={"max_attempts": 1}),
    )


def error_of(call) -> tuple[str, int]:
    with pytest.raises(ClientError) as raised:
        call()
    response = raised.value.response
    return response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"]


def test_list_queues_names_the_consoles_queues_at_urls_pointing_back_here(web: dict) -> None:
    base = f"http://127.0.0.1:{web['port']}/sqs/000000000000"
    assert sqs(web).list_queues()["QueueUrls"] == [
        f"{base}/orders-a",
        f"{base}/orders-b",
        f"{base}/payments",
    ]
    assert sqs(web).list_queues(QueueNamePrefix="orders")["QueueUrls"] == [
        f"{base}/orders-a",
        f"{base}/orders-b",
    ]
    assert "QueueUrls" not in sqs(web).list_queues(QueueNamePrefix="none")


def test_at_the_root_as_kombu_posts_it_is_the_same_endpoint(web: dict) -> None:
    urls = sqs(web, path="").list_queues()["QueueUrls"]
    assert urls[0] == f"http://127.0.0.1:{web['port']}/sqs/000000000000/orders-a"


def test_a_wrong_secret_an_unknown_key_or_a_missing_role_is_refused(web: dict) -> None:
    assert error_of(sqs(web, secret="x" * 40).list_queues) == ("SignatureDoesNotMatch", 403)
    assert error_of(sqs(web, user="stranger").list_queues) == ("AccessDenied", 403)
    stranger = web["keys"]["stranger"]
    revoked = manage(
        "kmq", "sqs-key", "revoke", stranger["AWS_ACCESS_KEY_ID"],
        KMQ_DATA_DIR=str(web["log"].parent),
    )  # fmt: skip
    assert revoked.returncode == 0, revoked.stderr
    assert error_of(sqs(web, user="stranger").list_queues) == ("InvalidClientTokenId", 403)


def test_an_action_not_built_yet_is_an_sqs_error_never_a_500(web: dict) -> None:
    code, http = error_of(lambda: sqs(web).get_queue_url(QueueName="orders-a"))
    assert (code, http) == ("AWS.SimpleQueueService.UnsupportedOperation", 400)


def test_everything_else_is_still_djangos(web: dict) -> None:
    assert status(f"http://127.0.0.1:{web['port']}/healthz") == 200
