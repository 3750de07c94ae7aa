"""The MD5 digests SQS answers a send and a receive with, computed as SQS
documents them ("Calculating the MD5 message digest for message
attributes"): the Java, .NET and JavaScript SDKs recompute them and refuse
an answer whose digest differs."""

import hashlib
from collections.abc import Mapping

from kmqadmin.sqs.protocol.message_attributes import Attribute

# The transport type of each attribute's value, as the digest encodes it.
STRING_VALUE, BINARY_VALUE = b"\x01", b"\x02"


def of_body(body: str) -> str:
    return hashlib.md5(body.encode(), usedforsecurity=False).hexdigest()


def of_attributes(attributes: Mapping[str, Attribute]) -> str | None:
    """Over the attributes sorted by name: each name, data type and value,
    each with its length as 4 bytes big-endian first. None for none."""
    if not attributes:
        return None
    digest = hashlib.md5(usedforsecurity=False)
    for name in sorted(attributes):
        attribute = attributes[name]
        digest.update(_sized(name.encode()))
        digest.update(_sized(attribute.data_type.encode()))
        digest.update(BINARY_VALUE if attribute.is_binary else STRING_VALUE)
        digest.update(_sized(attribute.value))
    return digest.hexdigest()


def _sized(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data
