"""A group coordinator that is moving or still loading (a broker just
started, a leader just failed over) answers so for a moment, then answers
properly: a call it refuses that way is made again until a deadline, and
only then does its error reach the caller."""

import time
from collections.abc import Callable

from confluent_kafka import KafkaError, KafkaException

BUSY = {
    KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
    KafkaError.COORDINATOR_NOT_AVAILABLE,
    KafkaError.NOT_COORDINATOR,
}
RETRY_S = 0.1  # between asks


def once_it_answers[T](call: Callable[[], T], deadline: float) -> T:
    """What ``call`` returns, asked again while it raises a busy
    coordinator's KafkaException and ``deadline`` (monotonic) allows."""
    while True:
        try:
            return call()
        except KafkaException as exc:
            if exc.args[0].code() not in BUSY or deadline - time.monotonic() < RETRY_S:
                raise
        time.sleep(RETRY_S)
