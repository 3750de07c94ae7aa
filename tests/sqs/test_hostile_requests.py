"""Hostile requests, correctly signed, to the real web process: whatever the
body, the answer is an SQS error with a 4xx and a reason, never a 500.
Examples as the fuzz suite draws them (tests/fuzz/profile.py): fixed in
`make test`, KMQ_FUZZ_EXAMPLES random ones in `make chaos`."""

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlencode

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz.profile import FUZZ, LONG
from tests.sqs.clients import Web

ACTIONS = [
    "CreateQueue", "GetQueueAttributes", "SetQueueAttributes", "TagQueue", "ListQueues",
    "SendMessage", "SendMessageBatch", "ReceiveMessage", "DeleteMessage",
    "ChangeMessageVisibilityBatch",
]  # fmt: skip
NAMES = st.sampled_from(
    [
        "Attribute",
        "Tag",
        "AttributeName",
        "QueueUrl",
        "QueueName",
        "MaxResults",
        "Attributes",
        "MessageBody",
        "MessageAttribute",
        "SendMessageBatchRequestEntry",
        "ReceiptHandle",
        "Entries",
        "MaxNumberOfMessages",
        "VisibilityTimeout",
        "DelaySeconds",
    ]
)
KEYS = st.lists(
    st.one_of(NAMES, st.text(max_size=6), st.integers(-2, 12).map(str)), min_size=1, max_size=4
).map(".".join)
VALUES = st.one_of(
    st.text(max_size=20), st.sampled_from(["", "1", "-1", "{", "orders-a", "String", "Binary"])
)
JSONS = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=10), inner, max_size=3)
    ),
    max_leaves=8,
)


@dataclass
class Answer:
    status_code: int
    headers: dict[str, str]
    text: str


def signed(web: Web, body: bytes, headers: dict[str, str]) -> Answer:
    """POSTed as botocore signs it (SigV4, the boss's key)."""
    key = web.keys["boss"]
    url = f"http://127.0.0.1:{web.port}/sqs"
    request = AWSRequest("POST", url, data=body, headers=headers)
    credentials = Credentials(key["AWS_ACCESS_KEY_ID"], key["AWS_SECRET_ACCESS_KEY"])
    SigV4Auth(credentials, "sqs", "eu-west-3").add_auth(request)
    sent = urllib.request.Request(url, body, dict(request.headers), method="POST")
    try:
        with urllib.request.urlopen(sent, timeout=30) as answer:
            return Answer(answer.status, _lower(answer.headers), answer.read().decode())
    except urllib.error.HTTPError as exc:
        return Answer(exc.code, _lower(exc.headers), exc.read().decode())


def assert_refused_or_answered(answer: Answer) -> None:
    assert answer.status_code < 500, answer.text
    if answer.status_code >= 400:
        assert "x-amzn-requestid" in answer.headers
        assert answer.text.strip(), "an error says why"


@settings(FUZZ, max_examples=LONG or 40)  # a request is cheap: more than the fuzz suite's 6
@given(action=st.sampled_from(ACTIONS), form=st.dictionaries(KEYS, VALUES, max_size=6))
def test_query_forms_of_any_shape_get_an_answer_never_a_500(
    web: Web, action: str, form: dict[str, str]
) -> None:
    body = urlencode({"Action": action, **form}).encode()
    headers = {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}
    assert_refused_or_answered(signed(web, body, headers))


@settings(FUZZ, max_examples=LONG or 40)  # a request is cheap: more than the fuzz suite's 6
@given(action=st.sampled_from(ACTIONS), params=JSONS)
def test_json_bodies_of_any_shape_get_an_answer_never_a_500(
    web: Web, action: str, params: object
) -> None:
    headers = {
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": f"AmazonSQS.{action}",
    }
    assert_refused_or_answered(signed(web, json.dumps(params).encode(), headers))


FORM = {"Content-Type": "application/x-www-form-urlencoded"}
JSON_LIST = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.ListQueues"}
JSON_CREATE = {**JSON_LIST, "X-Amz-Target": "AmazonSQS.CreateQueue"}


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        (b"\xff\xfe garbage", {"Content-Type": "application/x-www-form-urlencoded"}),
        (
            b"{not json",
            {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.ListQueues"},
        ),
        (b"Action=", {"Content-Type": "application/x-www-form-urlencoded"}),
        (
            b"Action=ListQueues&MaxResults=abc",
            {"Content-Type": "application/x-www-form-urlencoded"},
        ),
        (
            b"Action=CreateQueue&QueueName=q&Attribute.x.Name=A",
            {"Content-Type": "application/x-www-form-urlencoded"},
        ),
        (
            b"Action=CreateQueue&QueueName=q&Attribute.1.Name.x=A",
            {"Content-Type": "application/x-www-form-urlencoded"},
        ),
        (b"Action=ReceiveMessage&QueueUrl=orders-a&MaxNumberOfMessages=--1", FORM),
        (b"Action=GetQueueAttributes&QueueUrl=orders-a&AttributeName.%C2%B2=All", FORM),
        (b"Action=ListQueues&" + b"a." * 2000 + b"b=1", FORM),
        (b'{"QueueUrl": "\\ud800"}', JSON_LIST),
        (b"[" * 100_000, JSON_LIST),
        (b'{"QueueName": "q", "Attributes": {"DelaySeconds": "\xc2\xb2"}}', JSON_CREATE),
    ],
)
def test_garbage_is_a_400_with_a_reason(web: Web, body: bytes, headers: dict[str, str]) -> None:
    answer = signed(web, body, headers)
    assert answer.status_code == 400, answer.text


def _lower(headers: object) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}  # type: ignore[attr-defined]
