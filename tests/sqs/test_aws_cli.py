"""The AWS CLI from PyPI (its own botocore, in the JSON protocol) against
the endpoint, as docs/sqs.md tells an operator to use it: a queue made,
a message sent, received, deleted, and the queue's counts read back."""

import json
import subprocess
import sys
import uuid

from tests.process import ROOT, env
from tests.sqs.clients import Web


def aws(web: Web, user: str, *args: str) -> dict:
    """``aws sqs <args>`` signed with ``user``'s key; its JSON answer."""
    key = web.keys[user]
    endpoint = f"http://127.0.0.1:{web.port}/sqs"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "awscli",
            "--endpoint-url",
            endpoint,
            "--output",
            "json",
            "sqs",
            *args,
        ],
        cwd=ROOT,
        env=env(
            AWS_ACCESS_KEY_ID=key["AWS_ACCESS_KEY_ID"],
            AWS_SECRET_ACCESS_KEY=key["AWS_SECRET_ACCESS_KEY"],
            AWS_DEFAULT_REGION="eu-west-3",
            AWS_CONFIG_FILE="/dev/null",
            AWS_SHARED_CREDENTIALS_FILE="/dev/null",
        ),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else {}


def test_the_cli_makes_a_queue_sends_receives_and_deletes(web: Web) -> None:
    name = f"cli-{uuid.uuid4().hex[:8]}"
    url = aws(web, "boss", "create-queue", "--queue-name", name)["QueueUrl"]
    assert url == f"{web.base}/{name}"
    sent = aws(web, "worker", "send-message", "--queue-url", url, "--message-body", "héllo")
    got = aws(
        web,
        "worker",
        "receive-message",
        "--queue-url",
        url,
        "--wait-time-seconds",
        "10",
        "--message-system-attribute-names",
        "ApproximateReceiveCount",
    )
    [message] = got["Messages"]
    assert message["MessageId"] == sent["MessageId"] and message["Body"] == "héllo"
    assert message["Attributes"]["ApproximateReceiveCount"] == "1"
    handle = message["ReceiptHandle"]
    aws(web, "worker", "delete-message", "--queue-url", url, "--receipt-handle", handle)
    counts = aws(
        web, "watcher", "get-queue-attributes", "--queue-url", url, "--attribute-names", "All"
    )
    assert counts["Attributes"]["ApproximateNumberOfMessages"] == "0"
    assert counts["Attributes"]["QueueArn"].endswith(f":{name}")
