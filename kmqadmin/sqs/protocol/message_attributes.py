"""Message attributes: checked as SQS checks them, and carried in the
record's headers so a Kafka consumer reads them too.

Each attribute is a header of its own name holding its value (UTF-8 text
for String and Number, the bytes themselves for Binary); one more header,
``sqs-attribute-types``, keeps each one's data type (``Number.float``,
say), so a receive gives back the types that were sent. The one system
attribute a sender gives, AWSTraceHeader, is kept in ``sqs-aws-trace-header``.
"""

import base64
import binascii
import json
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from kmqadmin.sqs.protocol.errors import FORBIDDEN, SqsError, invalid_parameter_value

TYPES_HEADER = "sqs-attribute-types"
TRACE = "AWSTraceHeader"
TRACE_HEADER = "sqs-aws-trace-header"
MAX_ATTRIBUTES = 10
MAX_NAME = 256
NAME = re.compile(r"[A-Za-z0-9_.-]+")
DATA_TYPE = re.compile(r"(String|Number|Binary)(\.[A-Za-z0-9_.-]{1,256})?")
# SQS's own, and the headers kmqadmin's queues live by (kmq-redelivery-count,
# kmq-id, sqs-message-id...): an attribute may not pose as one.
RESERVED_PREFIXES = ("aws.", "amazon.", "kmq-", "sqs-")


@dataclass(frozen=True, slots=True)
class Attribute:
    data_type: str
    value: bytes  # as the digest and the header hold it

    @property
    def is_binary(self) -> bool:
        return self.data_type.startswith("Binary")

    def size(self, name: str) -> int:
        """What it counts toward MaximumMessageSize."""
        return len(name.encode()) + len(self.data_type.encode()) + len(self.value)


def given(raw: Any) -> dict[str, Attribute]:
    """A request's MessageAttributes, each checked; InvalidParameterValue
    (or InvalidParameterValue naming the attribute) otherwise."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise invalid_parameter_value("MessageAttributes must map names to attribute values.")
    if len(raw) > MAX_ATTRIBUTES:
        raise invalid_parameter_value(
            f"Number of message attributes [{len(raw)}] exceeds the allowed maximum "
            f"[{MAX_ATTRIBUTES}]."
        )
    return {_name(name): _attribute(name, value) for name, value in raw.items()}


def system(raw: Any) -> dict[str, Attribute]:
    """A request's MessageSystemAttributes: SQS takes one, AWSTraceHeader
    (X-Ray's trace header), a String."""
    if not raw:
        return {}
    if not isinstance(raw, dict) or set(raw) != {TRACE}:
        raise invalid_parameter_value(f"MessageSystemAttributes takes {TRACE} only.")
    attribute = _attribute(TRACE, raw[TRACE])
    if attribute.data_type != "String":
        raise _bad(TRACE, "must be of type String")
    return {TRACE: attribute}


def as_headers(attributes: dict[str, Attribute]) -> list[tuple[str, bytes]]:
    if not attributes:
        return []
    types = {name: attribute.data_type for name, attribute in attributes.items()}
    return [
        *((name, attribute.value) for name, attribute in attributes.items()),
        (TYPES_HEADER, json.dumps(types, separators=(",", ":")).encode()),
    ]


def _name(name: object) -> str:
    """SQS's words for a name of characters it does not allow; for its
    other rules (and the prefixes of kmqadmin's own headers), the rule."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise invalid_parameter_value(
            f"The message attribute name '{str(name)[:100]}' is invalid. Attribute name can "
            "contain A-Z, a-z, 0-9, underscore (_), hyphen (-), and period (.) characters."
        )
    if (
        len(name) > MAX_NAME
        or name.lower().startswith(RESERVED_PREFIXES)
        or name.startswith(".")
        or name.endswith(".")
        or ".." in name
    ):
        raise invalid_parameter_value(
            f"The message attribute name '{name[:100]}' is invalid: a name is at most 256 "
            "characters, does not start or end with a period nor have two in a row, and does "
            "not start with AWS., Amazon., kmq- or sqs-."
        )
    return name


def _attribute(name: str, raw: object) -> Attribute:
    if not isinstance(raw, dict):
        raise _bad(name, "must be an object with DataType and a value")
    data_type = raw.get("DataType")
    if not isinstance(data_type, str) or not DATA_TYPE.fullmatch(data_type):
        raise _bad(
            name,
            "has an invalid message attribute type, the set of supported type prefixes is "
            "Binary, Number, and String",
        )
    if data_type.startswith("Binary"):
        return Attribute(data_type, _binary(name, raw.get("BinaryValue")))
    text = raw.get("StringValue")
    if not isinstance(text, str) or not text:
        raise _bad(name, "must have a StringValue")
    if FORBIDDEN.search(text):
        raise _bad(name, "has characters SQS does not carry")
    if data_type.startswith("Number"):
        _number(name, text)
    return Attribute(data_type, text.encode())


def _binary(name: str, value: object) -> bytes:
    if not isinstance(value, str) or not value:
        raise _bad(name, "must have a BinaryValue")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise _bad(name, "has a BinaryValue that is not base64") from None


def _number(name: str, text: str) -> None:
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise _bad(name, "is a Number that is not a number") from None
    if not number.is_finite() or len(number.as_tuple().digits) > 38:
        raise _bad(name, "is a Number SQS would not hold (at most 38 digits)")


def _bad(name: str, reason: str) -> SqsError:
    return invalid_parameter_value(f"The message attribute '{name}' {reason}.")
