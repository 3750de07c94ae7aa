"""The share consumer's own error, and broker error codes as names people read."""

import kafka.errors as protocol_errors


class ShareConsumerError(RuntimeError):
    """The group refused this member for good (authorization, a full
    group), or the topic does not exist."""


class UnsettledRecords(ShareConsumerError):
    """librdkafka's consumer hands out its next fetch only once every record
    of the previous one is acknowledged."""


def error_name(code: int) -> str:
    """InvalidRecordStateError, not 121."""
    return protocol_errors.for_code(code).__name__
