"""SigV4 verification against botocore's own signer (what boto3, the AWS CLI
and kombu sign with): what it signs verifies; every part changed after
signing, a wrong or unknown key, a stale clock, an unsigned request, each
gets SQS's error."""

import dataclasses
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import pytest
from botocore.auth import SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from kmqadmin.sqs.auth.signature import SignatureError, SignedRequest, verify

KEY_ID, SECRET = "AKIAKMQADMINTEST0001", "s3cretS3cretS3cretS3cretS3cretS3cret0001"
ENDPOINT = "http://127.0.0.1:8000/sqs"
BODY = b'{"QueueNamePrefix": "orders"}'


def secret_of(key_id: str) -> str | None:
    return SECRET if key_id == KEY_ID else None


def arrived(request: AWSRequest, host: str = "127.0.0.1:8000") -> SignedRequest:
    """The request as our endpoint receives it: raw path and query, the
    headers botocore sends, and the Host header its HTTP client adds."""
    prepared = request.prepare()
    url = urlsplit(prepared.url)
    headers = [(k, v if isinstance(v, str) else v.decode()) for k, v in prepared.headers.items()]
    body = prepared.body or b""
    return SignedRequest(
        prepared.method,
        url.path,
        url.query,
        [*headers, ("Host", host)],
        body if isinstance(body, bytes) else body.encode(),
    )


def json_post(secret: str = SECRET, token: str | None = None, region: str = "eu-west-3"):
    request = AWSRequest(
        method="POST",
        url=ENDPOINT,
        data=BODY,
        headers={
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": "AmazonSQS.ListQueues",
        },
    )
    SigV4Auth(Credentials(KEY_ID, secret, token), "sqs", region).add_auth(request)
    return arrived(request)


def presigned_get() -> SignedRequest:
    """kombu's query-protocol receive: its parameters in a presigned URL."""
    request = AWSRequest(
        method="GET",
        url=f"{ENDPOINT}/000000000000/orders",
        params={
            "Action": "ReceiveMessage",
            "MessageAttributeName.1": "trace id",
            "Note": "naïve ~*",
            "WaitTimeSeconds": "20",
        },
    )
    SigV4QueryAuth(Credentials(KEY_ID, SECRET), "sqs", "us-east-1", expires=300).add_auth(request)
    return arrived(request)


def refused(
    request: SignedRequest, now: datetime | None = None, **kwargs: object
) -> SignatureError:
    with pytest.raises(SignatureError) as raised:
        verify(request, secret_of, now or datetime.now(UTC), **kwargs)
    return raised.value


def test_what_botocore_signs_in_a_header_or_presigns_verifies_as_its_key() -> None:
    now = datetime.now(UTC)
    assert verify(json_post(), secret_of, now) == KEY_ID
    assert verify(presigned_get(), secret_of, now) == KEY_ID
    assert verify(json_post(region="us-east-1"), secret_of, now, region="us-east-1") == KEY_ID


@pytest.mark.parametrize(
    "change",
    [
        lambda r: dataclasses.replace(r, body=r.body.replace(b"orders", b"orderz")),
        lambda r: dataclasses.replace(r, path="/sqs/"),
        lambda r: dataclasses.replace(r, query="Action=DeleteQueue"),
        lambda r: dataclasses.replace(r, method="PUT"),
        lambda r: dataclasses.replace(
            r,
            headers=[
                (k, "AmazonSQS.DeleteQueue" if k.lower() == "x-amz-target" else v)
                for k, v in r.headers
            ],
        ),
        # a proxy that rewrote Host: what the client signed is not what arrived
        lambda r: dataclasses.replace(
            r, headers=[(k, "sqs.internal:80" if k == "Host" else v) for k, v in r.headers]
        ),
    ],
    ids=["body", "path", "query", "method", "signed header", "host"],
)
def test_any_signed_part_changed_after_signing_does_not_match(change) -> None:
    error = refused(change(json_post()))
    assert (error.code, error.status) == ("SignatureDoesNotMatch", 403)


def test_a_presigned_parameter_changed_does_not_match() -> None:
    request = presigned_get()
    error = refused(
        dataclasses.replace(
            request, query=request.query.replace("WaitTimeSeconds=20", "WaitTimeSeconds=1")
        )
    )
    assert error.code == "SignatureDoesNotMatch"


def test_a_wrong_secret_does_not_match_and_an_unknown_or_temporary_key_is_invalid() -> None:
    assert refused(json_post(secret="not-the-secret")).code == "SignatureDoesNotMatch"
    stranger = json_post()
    stranger = dataclasses.replace(
        stranger,
        headers=[
            (k, v.replace(KEY_ID, "AKIAUNKNOWNKEY000000") if k == "Authorization" else v)
            for k, v in stranger.headers
        ],
    )
    assert (refused(stranger).code, refused(stranger).status) == ("InvalidClientTokenId", 403)
    assert refused(json_post(token="session-token")).code == "InvalidClientTokenId"


def test_a_clock_more_than_five_minutes_off_is_refused_either_way() -> None:
    request, now = json_post(), datetime.now(UTC)
    assert "expired" in refused(request, now + timedelta(minutes=6)).message
    assert "not yet current" in refused(request, now - timedelta(minutes=6)).message
    assert verify(request, secret_of, now + timedelta(minutes=4)) == KEY_ID


def test_a_presigned_request_is_good_until_it_expires() -> None:
    request, now = presigned_get(), datetime.now(UTC)
    assert verify(request, secret_of, now + timedelta(seconds=290)) == KEY_ID
    assert "expired" in refused(request, now + timedelta(seconds=310)).message


def test_an_unsigned_or_malformed_request_says_what_is_missing() -> None:
    unsigned = SignedRequest("POST", "/sqs", "", [("Host", "127.0.0.1:8000")], BODY)
    assert (refused(unsigned).code, refused(unsigned).status) == ("MissingClientTokenId", 403)
    garbage = dataclasses.replace(unsigned, headers=[("Authorization", "AWS4-HMAC-SHA256 x")])
    assert (refused(garbage).code, refused(garbage).status) == ("IncompleteSignature", 400)


def test_a_credential_scoped_elsewhere_is_refused() -> None:
    assert "region" in refused(json_post(), region="us-east-1").message
    request = json_post()
    other_service = dataclasses.replace(
        request,
        headers=[
            (k, v.replace("/sqs/aws4_request", "/sns/aws4_request") if k == "Authorization" else v)
            for k, v in request.headers
        ],
    )
    assert "service" in refused(other_service).message
