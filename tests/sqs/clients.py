"""Real SQS clients for the endpoint: boto3 as it is (the JSON protocol)
and boto3 made to speak the query protocol, as SDKs before 2023 do."""

import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import botocore.session
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from tests.process import wait_for

# Each user's role (None: no role at all).
USERS = {"watcher": "viewer", "worker": "operator", "boss": "admin", "stranger": None}
PROTOCOLS = ["json", "query"]
QUERY_MODEL = Path(__file__).parent / "query_model"


@dataclass(frozen=True)
class Web:
    port: int
    keys: dict[str, dict[str, str]]
    log: Path
    settings: dict[str, str]
    pid: int

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/sqs/000000000000"


def sqs(
    web: Web,
    user: str = "watcher",
    protocol: str = "json",
    path: str = "/sqs",
    secret: str | None = None,
    port: int | None = None,
    connections: int = 10,
) -> Any:
    """A boto3 SQS client of ``user``'s key; ``protocol`` "query" loads
    SQS's last query-protocol model first (tests/sqs/query_model). ``port``:
    another web process's; ``connections``: how many requests it may have
    open at once (boto3 clients are thread-safe)."""
    session = botocore.session.get_session()
    if protocol == "query":
        session.get_component("data_loader").search_paths.insert(0, str(QUERY_MODEL))
    key = web.keys[user]
    return boto3.Session(botocore_session=session).client(
        "sqs",
        endpoint_url=f"http://127.0.0.1:{port or web.port}{path}",
        region_name="eu-west-3",
        aws_access_key_id=key["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=secret or key["AWS_SECRET_ACCESS_KEY"],
        config=Config(retries={"max_attempts": 1}, max_pool_connections=connections),
    )


def error_of(call: Any) -> tuple[str, int]:
    """The SQS error code and HTTP status ``call`` is refused with."""
    with pytest.raises(ClientError) as raised:
        call()
    response = raised.value.response
    return response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"]


def status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return answer.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return None


def receive_all(client: Any, url: str, count: int, **options: Any) -> list[dict]:
    """At least ``count`` messages, in long polls of up to 10."""
    got: list[dict] = []

    def enough() -> bool:
        answer = client.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=2, **options
        )
        got.extend(answer.get("Messages", []))
        return len(got) >= count

    wait_for(enough, 60, f"{count} messages", every=0)
    return got


def counts(client: Any, url: str) -> tuple[int, int]:
    """The queue's ApproximateNumberOfMessages and ...NotVisible."""
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    got = client.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    return int(got[names[0]]), int(got[names[1]])
