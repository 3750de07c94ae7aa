"""Kafka's own bounds on coordinates: a partition is an int32, an offset an
int64. A number past them reaches librdkafka as an OverflowError, or names a
record that cannot exist."""

MAX_PARTITION = 2**31 - 1
MAX_OFFSET = 2**63 - 1
