"""Put beside moto's tests/test_sqs by conformance/sqs/run (not moto's own).

moto's server mode resets its state between tests through /moto-api/reset,
which an SQS endpoint does not have (MOTO_CALL_RESET_API=false): instead,
each test's queues are deleted after it through DeleteQueue. SQS, and so
the endpoint, then keeps a name for 60 s, where moto frees it at once: a
CreateQueue refused with QueueDeletedRecently is sent again until the name
is free. And moto asks STS for the account id, which this endpoint does not
serve: the ``account_id`` fixture answers moto's account.
"""

import os
import time

import boto3
import botocore.client
import pytest
from botocore.exceptions import ClientError

NAME_HELD_S = 65  # SQS's 60 s, and a little


@pytest.fixture
def account_id():
    yield "123456789012"


@pytest.fixture(autouse=True)
def _reset_queues():
    client = boto3.client(
        "sqs",
        region_name="us-east-1",
        endpoint_url=os.environ["TEST_SERVER_MODE_ENDPOINT"],
        aws_access_key_id="FOOBARKEY",
        aws_secret_access_key="FOOBARSECRET",
    )
    before = _queues(client)
    yield
    for url in _queues(client) - before:
        try:
            client.delete_queue(QueueUrl=url)
        except ClientError as exc:  # reported, not fatal
            print(f"cleanup: could not delete {url}: {exc}")


def _queues(client) -> set[str]:
    urls, token = [], None
    while True:
        page = client.list_queues(MaxResults=1000, **({"NextToken": token} if token else {}))
        urls += page.get("QueueUrls", [])
        token = page.get("NextToken")
        if not token:
            return set(urls)


_make_api_call = botocore.client.BaseClient._make_api_call


def _waiting_for_names(self, operation_name, api_params):
    if operation_name != "CreateQueue":
        return _make_api_call(self, operation_name, api_params)
    deadline = time.monotonic() + NAME_HELD_S
    while True:
        try:
            return _make_api_call(self, operation_name, api_params)
        except ClientError as exc:
            if "QueueDeletedRecently" not in exc.response["Error"]["Code"]:
                raise
            if time.monotonic() > deadline:
                raise
            time.sleep(2)


botocore.client.BaseClient._make_api_call = _waiting_for_names
