"""Step 4 of kmq: a batch's offsets committed, and what a refusal means.

A commit the group refuses while it moves (its coordinator died or moved,
the member was expired during a broker's outage) is not a reason to fail
the poll: the start markers are written, so the messages are safely in
flight and are handed out. The offsets stay where they were, and whoever
reads the partition next delivers the messages again: a second delivery,
never a loss.
"""

import logging
import threading

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from kmqadmin.kafka.client.bounded_call import CallThread

log = logging.getLogger(__name__)

# A synchronous commit has no timeout of its own (kafka/client/bounded_call.py):
# past this the consumer is given up on, as one without a broker is.
COMMIT_TIMEOUT_S = 15.0
# A commit refused because the group is moving: librdkafka rejoins by itself.
_GROUP_MOVING = {
    KafkaError.UNKNOWN_MEMBER_ID,
    KafkaError.ILLEGAL_GENERATION,
    KafkaError.REBALANCE_IN_PROGRESS,
    KafkaError.NOT_COORDINATOR,
    KafkaError.COORDINATOR_NOT_AVAILABLE,
    KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
    KafkaError._WAIT_COORD,
    KafkaError._TIMED_OUT,
    KafkaError._TRANSPORT,
}


class OffsetCommits:
    """Synchronous commits of one queue's consumer, each on a thread of its
    own so that one its coordinator never answers can be walked away from."""

    def __init__(self, topic: str) -> None:
        self._topic = topic
        self._thread = CallThread("kmq-commit")
        # Commits of started messages the group refused or never answered:
        # whoever reads those partitions next delivers the messages again,
        # so a caller that has not handed them out yet should not (receivers.py).
        self.refused = 0

    def commit(self, consumer: Consumer, commits: dict[int, int]) -> threading.Thread | None:
        """Commits ``commits`` (partition -> next offset). None once done, or
        refused while the group moves; the thread still inside ``consumer``
        when no answer came in COMMIT_TIMEOUT_S: the consumer is then to be
        replaced, and closed only once that thread is out of it."""
        offsets = [TopicPartition(self._topic, p, o) for p, o in commits.items()]
        try:
            hung = self._thread.submit(
                lambda: consumer.commit(offsets=offsets, asynchronous=False)
            ).wait(COMMIT_TIMEOUT_S)
        except KafkaException as exc:
            error = exc.args[0]
            if not (error.retriable() or error.code() in _GROUP_MOVING):
                raise
            log.warning(
                "%s: offsets not committed while the group moves (%s); the messages are "
                "in flight all the same and will be delivered again",
                self._topic,
                error.str(),
            )
            self.refused += 1
            return None
        if hung is not None:
            # Its coordinator may never be found again (bounded_call.py):
            # what it polled is in flight all the same, as above.
            self.refused += 1
            self._thread.close()  # its thread ends when the call does
            self._thread = CallThread("kmq-commit")
        return hung

    def close(self) -> None:
        self._thread.close()
