"""SqsError as real clients read it: boto3 over TCP for the JSON protocol
(the exception class it raises and the code kombu compares), botocore's
query parser for the XML."""

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
import pytest
from botocore.awsrequest import HTTPHeaders
from botocore.parsers import create_parser

from kmqadmin.sqs.auth.signature import SignatureError
from kmqadmin.sqs.protocol import errors
from kmqadmin.sqs.protocol.errors import Answer, SqsError

REQUEST_ID = "4d6f1c66-0000-4000-8000-000000000001"


@pytest.fixture
def answering() -> Iterator[tuple[str, list[Answer]]]:
    """An HTTP server giving each request the next Answer of the list."""
    answers: list[Answer] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            answer = answers.pop(0)
            self.send_response(answer.status)
            for name, value in answer.headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/sqs", answers
    finally:
        server.shutdown()


def client(endpoint: str):
    return boto3.client(
        "sqs",
        endpoint_url=endpoint,
        region_name="eu-west-3",
        aws_access_key_id="AKIAKMQADMINTEST0001",
        aws_secret_access_key="secret",
        config=boto3.session.Config(retries={"max_attempts": 1}),
    )


def test_boto3_raises_the_modelled_exception_with_the_query_code(answering) -> None:
    endpoint, answers = answering
    answers.append(errors.queue_does_not_exist().as_json(REQUEST_ID))
    sqs = client(endpoint)
    with pytest.raises(sqs.exceptions.QueueDoesNotExist) as raised:
        sqs.get_queue_url(QueueName="nowhere")
    error = raised.value.response["Error"]
    assert error["Code"] == "AWS.SimpleQueueService.NonExistentQueue"  # what kombu compares
    assert error["Message"] == "The specified queue does not exist."
    assert raised.value.response["ResponseMetadata"]["RequestId"] == REQUEST_ID
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_an_unmodelled_code_and_a_message_needing_escapes_reach_boto3_intact(answering) -> None:
    endpoint, answers = answering
    message = 'Value "11" for <MaxNumberOfMessages> is invalid.\r\nReason: 1 to 10 \u00e9'
    answers.append(errors.invalid_parameter_value(message).as_json(REQUEST_ID))
    sqs = client(endpoint)
    with pytest.raises(sqs.exceptions.ClientError) as raised:
        sqs.receive_message(QueueUrl=f"{endpoint}/000000000000/q", MaxNumberOfMessages=10)
    assert raised.value.response["Error"]["Code"] == "InvalidParameterValue"
    assert raised.value.response["Error"]["Message"] == message


def test_a_refused_signature_is_a_403_with_its_code(answering) -> None:
    endpoint, answers = answering
    refused = SignatureError("SignatureDoesNotMatch", "The request signature we calculated...")
    answers.append(SqsError.of_signature(refused).as_json(REQUEST_ID))
    sqs = client(endpoint)
    with pytest.raises(sqs.exceptions.ClientError) as raised:
        sqs.list_queues()
    assert raised.value.response["Error"]["Code"] == "SignatureDoesNotMatch"
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403


def test_the_query_protocol_reads_the_same_error_from_xml() -> None:
    message = 'Line one\r\nwith <tags> & "quotes"'
    answer = errors.invalid_parameter_value(message).as_xml(REQUEST_ID)
    parsed = create_parser("query").parse(
        {"status_code": answer.status, "headers": HTTPHeaders(answer.headers), "body": answer.body},
        None,
    )
    assert parsed["Error"]["Code"] == "InvalidParameterValue"
    assert parsed["Error"]["Message"] == message  # the \r kept, as &#xD;
    assert parsed["Error"]["Type"] == "Sender"
    assert parsed["ResponseMetadata"]["RequestId"] == REQUEST_ID
