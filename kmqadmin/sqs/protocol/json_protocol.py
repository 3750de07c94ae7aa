"""SQS's JSON protocol, the one every SDK speaks today: ``POST`` with
``X-Amz-Target: AmazonSQS.<Action>`` and a JSON object of the action's
parameters; the answer is the result's JSON object."""

import json
from typing import Any

from kmqadmin.sqs.auth.signature import SignedRequest
from kmqadmin.sqs.protocol.errors import JSON_CONTENT_TYPE, Answer, SqsError
from kmqadmin.sqs.request import JSON_TARGET


def parse(request: SignedRequest) -> tuple[str, dict[str, Any]]:
    """The action and its parameters; SqsError for a body that is no JSON object."""
    target = request.header("x-amz-target") or ""
    if not target.startswith(JSON_TARGET):
        raise SqsError("InvalidAction", f"X-Amz-Target {target[:100]!r} names no SQS action.")
    try:
        params = json.loads(request.body or b"{}")
        # JSON may escape a lone surrogate (\ud800), which no UTF-8 can hold.
        json.dumps(params, ensure_ascii=False).encode()
    except (ValueError, UnicodeError, RecursionError) as exc:
        raise SqsError("SerializationException", f"the body is no JSON SQS takes: {exc}") from exc
    if not isinstance(params, dict):
        raise SqsError("SerializationException", "the body must be a JSON object.")
    return target.removeprefix(JSON_TARGET), params


def answer(result: dict[str, Any], request_id: str) -> Answer:
    return Answer(
        200,
        (("Content-Type", JSON_CONTENT_TYPE), ("x-amzn-RequestId", request_id)),
        json.dumps(result, separators=(",", ":")).encode(),
    )
