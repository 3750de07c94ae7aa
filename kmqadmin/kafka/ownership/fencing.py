"""What a failed transaction says about the owner's hold on its partitions.

Every transaction an owner commits carries an offset commit with its
consumer's group metadata (KIP-447), so the broker refuses it once the group
has moved on: the owner's partitions may be another's now, and nothing the
transaction wrote lands. Its revoke follows; until then the owner takes
back what the transaction took out of its states (the tracker reads the
partitions afresh, the scheduler re-arms what it fired). A producer that can
do nothing more (fenced by another process started in the same slot, or by
its own transaction's timeout; failed fatally; or left without an answer
for the transaction's life) ends the owner's life, and its next one starts
clean, with new clients.
"""

from confluent_kafka import KafkaError, KafkaException

# The group moved on: an offset commit from a stale generation or member.
_GROUP_MOVED_ON = {
    KafkaError.ILLEGAL_GENERATION,
    KafkaError.UNKNOWN_MEMBER_ID,
    KafkaError.FENCED_INSTANCE_ID,
    KafkaError.REBALANCE_IN_PROGRESS,
}
# The producer's epoch is over: a newer producer of the same transactional id.
_PRODUCER_FENCED = {
    KafkaError._FENCED,
    KafkaError.PRODUCER_FENCED,
    KafkaError.INVALID_PRODUCER_EPOCH,
}


class ProducerFenced(KafkaException):
    """The owner's producer can do nothing more; its life must end."""


def group_moved_on(exc: KafkaException) -> bool:
    """Whether ``exc`` says the owner's group generation is over."""
    error = _error(exc)
    return error is not None and error.code() in _GROUP_MOVED_ON


def producer_done(exc: KafkaException) -> bool:
    """Whether ``exc`` leaves the producer unusable (fenced, or fatal)."""
    error = _error(exc)
    return error is not None and (error.fatal() or error.code() in _PRODUCER_FENCED)


def timed_out(exc: KafkaException) -> bool:
    """Whether ``exc`` is a call that got no answer in time."""
    error = _error(exc)
    return error is not None and error.code() == KafkaError._TIMED_OUT


def _error(exc: KafkaException) -> KafkaError | None:
    """The client's error; None for one of ours, raised with a message."""
    first = exc.args[0] if exc.args else None
    return first if isinstance(first, KafkaError) else None
