"""OwnerProducer: the one transactional producer of an owner's life.

Zombies are fenced by the group (KIP-447): every transaction commits
offsets with the consumer's group metadata, which the broker refuses from a
member of an older generation, so an owner that lost its partitions cannot
commit anything on them (fencing.py). Its transactional id is the owner's
slot's (owned.py): a restarted owner in the same slot aborts what its
predecessor left open as it starts. A transaction lives no longer than the
group's session timeout: by the time a dead owner's partitions are handed
to another, the broker is free to abort what it left open (Kafka aborts
expired transactions every
transaction.abort.timed.out.transaction.cleanup.interval.ms, 10 s by
default), and the new owner's barrier (barrier.py) waits for that.
"""

import logging
from collections.abc import Callable, Mapping

from confluent_kafka import KafkaException, Producer, TopicPartition

from kmqadmin.kafka.client.bounded_call import within
from kmqadmin.kafka.client.config import producer_config, session_timeout_s

from .barrier import write_barriers
from .fencing import ProducerFenced, group_moved_on, producer_done, timed_out
from .owned import Owned

log = logging.getLogger(__name__)


class OwnerProducer:
    def __init__(self, owned: Owned) -> None:
        """Ready to use: ``init_transactions`` has returned."""
        timeout_ms = int(session_timeout_s(owned.kafka_config) * 1000)
        config = producer_config(
            owned.bootstrap_servers,
            transactional_id=owned.transactional_id,
            extra={"transaction.timeout.ms": timeout_ms, **owned.kafka_config},
        )
        # A transaction is dead after this anyway: the broker aborts it.
        self._timeout_s = int(config["transaction.timeout.ms"]) / 1000
        self._producer = Producer(config)
        self._producer.init_transactions(30)
        self._hung = False  # a call of its own never returned (_send_offsets)

    def barriers(
        self, topic: str, keys: Mapping[int, bytes], value: bytes | None
    ) -> dict[int, int]:
        """One barrier record per partition of ``keys``, in one transaction;
        each one's offset."""
        return write_barriers(self._producer, topic, keys, value)

    def transact(
        self,
        offsets: list[TopicPartition],
        group_metadata: object,
        act: Callable[[Producer], None],
    ) -> bool:
        """One transaction: ``act(producer)`` writes, and ``offsets`` are
        committed with ``group_metadata``, so nothing lands once the group
        has moved on. False when it failed and was aborted: nothing it wrote
        is visible. ProducerFenced when the producer can do nothing more."""
        producer = self._producer
        try:
            producer.begin_transaction()
            act(producer)
            self._send_offsets(offsets, group_metadata)
            producer.commit_transaction(30)
        except ProducerFenced:
            raise
        except KafkaException as exc:
            self._abort(offsets, exc)
            return False
        return True

    def _send_offsets(self, offsets: list[TopicPartition], group_metadata: object) -> None:
        """``send_offsets_to_transaction``, given up on after the
        transaction's life. librdkafka ignores that call's timeout while the
        group coordinator it knows is gone (issues #5456 and #5511): a tracker
        whose coordinator was killed waited on it for as long as the broker
        stayed down. The call runs on a thread of its own, so the owner can
        walk away; its producer is then done (a new life fences it as it
        starts, so the call, if it ever ends, commits nothing)."""
        hung = within(
            lambda: self._producer.send_offsets_to_transaction(
                offsets, group_metadata, self._timeout_s
            ),
            self._timeout_s + 1,
            "kmq-send-offsets",
        )
        if hung is not None:
            self._hung = True
            raise ProducerFenced(f"no answer to send_offsets_to_transaction in {self._timeout_s} s")

    def _abort(self, offsets: list[TopicPartition], exc: KafkaException) -> None:
        if producer_done(exc):
            raise ProducerFenced(exc.args[0]) from exc
        try:
            self._producer.abort_transaction(10)
        except KafkaException as abort:
            raise ProducerFenced(abort.args[0]) from exc
        if timed_out(exc):
            # A coordinator that did not answer within the transaction's life
            # may be one this client never reaches again (a broker gone,
            # librdkafka #5511): a new life asks the cluster afresh.
            raise ProducerFenced(exc.args[0]) from exc
        where = sorted({f"{tp.topic}/{tp.partition}" for tp in offsets})
        if group_moved_on(exc):
            log.info("transaction on %s aborted: the group moved on (%s)", where, exc)
        else:
            log.warning("transaction on %s failed (%s); aborted", where, exc)

    def flush(self, timeout: float) -> None:
        if not self._hung:  # else nothing it holds can land: it is fenced
            self._producer.flush(timeout)
