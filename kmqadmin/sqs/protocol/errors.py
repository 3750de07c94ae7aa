"""SqsError: a refusal as SQS words it, in either wire protocol.

Every SDK today speaks SQS's JSON protocol, where an error is
``{"__type": "com.amazonaws.sqs#<Shape>", "message": ...}`` plus an
``x-amzn-query-error: <query code>;Sender`` header: botocore takes the
error's code from that header (so kombu, which compares codes such as
``ReceiptHandleIsInvalid``, sees the same ones it saw from the query
protocol) and the exception class from the shape. Older clients speak the
query protocol, whose errors are XML with the query code. One SqsError
renders as both.
"""

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape

from kmqadmin.sqs.auth.signature import SignatureError

if TYPE_CHECKING:
    from kmqadmin.console.services.roles import Role
    from kmqadmin.sqs.auth.caller import Caller

XML_NAMESPACE = "http://queue.amazonaws.com/doc/2012-11-05/"
JSON_CONTENT_TYPE = "application/x-amz-json-1.0"
XML_CONTENT_TYPE = "text/xml"
# How AWS escapes text in XML (moto and the SDKs' own tests agree): a
# carriage return kept raw would come back as a line feed from any XML parser.
XML_ENTITIES = {"\r": "&#xD;", '"': "&quot;"}
# The characters SQS takes in a message (XML's): #x9 | #xA | #xD | #x20 to
# #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF.
FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass(frozen=True, slots=True)
class Answer:
    """An HTTP answer, before the web server: status, headers, body."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


class SqsError(Exception):
    """``shape``: the JSON protocol's error shape; ``code``: the query
    protocol's code (the same for most); ``sender``: the client's fault."""

    def __init__(
        self,
        shape: str,
        message: str,
        status: int = 400,
        code: str | None = None,
        sender: bool = True,
    ) -> None:
        super().__init__(message)
        self.shape, self.message, self.status = shape, message, status
        self.code, self.sender = code or shape, sender

    @classmethod
    def of_signature(cls, error: SignatureError) -> "SqsError":
        return cls(error.code, error.message, error.status)

    def as_json(self, request_id: str) -> Answer:
        body = f'{{"__type":"com.amazonaws.sqs#{self.shape}","message":{_json(self.message)}}}'
        return Answer(
            self.status,
            (
                ("Content-Type", JSON_CONTENT_TYPE),
                ("x-amzn-RequestId", request_id),
                ("x-amzn-query-error", f"{self.code};{self._fault}"),
            ),
            body.encode(),
        )

    def as_xml(self, request_id: str) -> Answer:
        body = (
            f'<?xml version="1.0"?><ErrorResponse xmlns="{XML_NAMESPACE}"><Error>'
            f"<Type>{self._fault}</Type><Code>{xml_text(self.code)}</Code>"
            f"<Message>{xml_text(self.message)}</Message><Detail/></Error>"
            f"<RequestId>{request_id}</RequestId></ErrorResponse>"
        )
        return Answer(
            self.status,
            (("Content-Type", XML_CONTENT_TYPE), ("x-amzn-RequestId", request_id)),
            body.encode(),
        )

    @property
    def _fault(self) -> str:
        return "Sender" if self.sender else "Receiver"


def xml_text(text: str) -> str:
    """Escaped as AWS escapes; a character XML cannot carry at all (one a
    client echoed into an error message, say) shows as U+FFFD."""
    return escape(FORBIDDEN.sub("\ufffd", text), XML_ENTITIES)


def _json(text: str) -> str:
    return json.dumps(text)


def queue_does_not_exist() -> SqsError:
    return SqsError(
        "QueueDoesNotExist",
        "The specified queue does not exist.",
        code="AWS.SimpleQueueService.NonExistentQueue",
    )


def invalid_parameter_value(message: str) -> SqsError:
    return SqsError("InvalidParameterValueException", message, code="InvalidParameterValue")


def missing_parameter(name: str) -> SqsError:
    return SqsError(
        "MissingRequiredParameterException",
        f"The request must contain the parameter {name}.",
        code="MissingParameter",
    )


def unsupported_operation(action: str) -> SqsError:
    """An SQS action this endpoint does not offer (AddPermission, say)."""
    return SqsError(
        "UnsupportedOperation",
        f"{action} is not supported by this endpoint.",
        code="AWS.SimpleQueueService.UnsupportedOperation",
    )


def access_denied(what: str, needed: "Role", caller: "Caller") -> SqsError:
    return SqsError(
        "AccessDenied",
        f"{what} needs the {needed.name.lower()} role; this key's user is "
        f"{caller.role.name.lower()}.",
        status=403,
    )


def service_unavailable(reason: str) -> SqsError:
    """Our side cannot answer now (Kafka, a setting): the client may retry."""
    return SqsError("ServiceUnavailable", reason, status=503, sender=False)


def invalid_action(action: str) -> SqsError:
    """A name that is no SQS action at all."""
    return SqsError("InvalidAction", f"The action {action} is not valid for this endpoint.")
