"""OwnerProducer: the transactional producers of an owner's life.

Zombies are fenced by the group (KIP-447): every transaction commits
offsets with the consumer's group metadata, which the broker refuses from a
member of an older generation, so an owner that lost its partitions cannot
commit anything on them (fencing.py). Its transactional id is the owner's
slot's (owned.py): a restarted owner in the same slot aborts what its
predecessor left open as it starts. One that never comes back leaves it to
the broker, which aborts it by the time the group hands its partitions on
(transaction_timeout.py); the new owner's barrier (barrier.py) waits for
that.

An owner that fires back to back (the scheduler) has two producers, lanes
taking turns: while one commits, the other begins the next transaction and
sends its offsets, so each transaction waits on the broker once (its
commit), not twice. That transaction passed the group's check before
anything is written in it; an owner paused meanwhile and resumed after its
group moved on could still write in it. Its offsets are pending until it is
decided, so a new owner's barriers, written once its offsets are stable,
follow whatever it writes (barrier.py).

An owner that redelivers in bursts (the tracker) commits behind itself
(``transact_behind``): it writes a transaction on one lane and goes on
while that lane's thread sends the offsets and commits, so the next turn
writes on the other lane without waiting on the broker at all. A lane holds
one transaction at a time: a third turn waits for the first's commit.
Outcomes reach the owner in order, on its own thread (``collect``).
"""

import logging
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from confluent_kafka import KafkaException, Producer, TopicPartition

from kmqadmin.kafka.client.bounded_call import CallThread, Pending
from kmqadmin.kafka.client.clock import to_s
from kmqadmin.kafka.client.config import producer_config
from kmqadmin.kafka.ownership.barrier import write_barriers
from kmqadmin.kafka.ownership.fencing import (
    ProducerFenced,
    group_moved_on,
    producer_done,
    timed_out,
)
from kmqadmin.kafka.ownership.owned import Owned
from kmqadmin.kafka.ownership.transaction_timeout import transaction_timeout_ms

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A lane's next transaction, begun and its offsets sent ahead of time."""

    lane: Producer
    offsets: list[TopicPartition]
    call: Pending  # begin_transaction + send_offsets_to_transaction
    since: float  # time.monotonic()


# Called with the offsets a transaction committed, or None when it was aborted.
Done = Callable[[list[TopicPartition] | None], None]


@dataclass(frozen=True, slots=True)
class _Committing:
    """A transaction written and left to its lane's thread to commit."""

    lane: Producer
    offsets: list[TopicPartition]
    call: Pending  # send_offsets_to_transaction + commit_transaction
    done: Done
    deadline: float  # time.monotonic() past which its call is taken for hung (_wait)


class OwnerProducer:
    def __init__(self, owned: Owned, lanes: int = 1) -> None:
        """Ready to use: every lane's ``init_transactions`` has returned.

        ``lanes``: transactional producers taking turns. With two, the next
        transaction is begun and its offsets sent (``transact``'s
        ``prepare_next``) while the current one commits, so transactions
        back to back wait on the broker once each (the commit), not twice
        (the offsets, then the commit): the scheduler's firing
        (docs/scheduler.md). A lane costs a producer's threads and
        connections, so owners that are not timed to the millisecond keep one.
        """
        extra = dict(owned.kafka_config)
        if "transaction.timeout.ms" not in extra:
            extra["transaction.timeout.ms"] = transaction_timeout_ms(
                owned.bootstrap_servers, owned.kafka_config
            )
        configs = [
            producer_config(owned.bootstrap_servers, transactional_id=tid, extra=extra)
            for tid in owned.transactional_ids(lanes)
        ]
        # A transaction is dead after this anyway: the broker aborts it.
        self._timeout_s = to_s(int(configs[0]["transaction.timeout.ms"]))
        self._lanes = [Producer(config) for config in configs]
        for lane in self._lanes:
            lane.init_transactions(30)
        self._next = 0  # the lane the next transaction uses
        self._prepared: _Prepared | None = None
        self._hung = False  # a call of its own never returned (_wait)
        # Where send_offsets_to_transaction runs (_wait).
        self._calls = CallThread("kmq-send-offsets")
        # Transactions committing behind the owner (transact_behind), oldest
        # first; each lane's commits run on a thread of its own.
        self._committing: deque[_Committing] = deque()
        self._behind = [CallThread(f"kmq-commit-{i}") for i in range(lanes)]

    def barriers(
        self, topic: str, keys: Mapping[int, bytes], value: bytes | None
    ) -> dict[int, int]:
        """One barrier record per partition of ``keys``, in one transaction;
        each one's offset. Nothing may be prepared or committing
        (``unprepare``)."""
        assert self._prepared is None and not self._committing
        return write_barriers(self._lanes[self._next], topic, keys, value)

    def transact(
        self,
        offsets: list[TopicPartition],
        group_metadata: object,
        act: Callable[[Producer], None],
        prepare_next: list[TopicPartition] | None = None,
    ) -> bool:
        """One transaction: ``act(producer)`` writes, and ``offsets`` are
        committed with ``group_metadata``, so nothing lands once the group
        has moved on. False when it failed and was aborted: nothing it wrote
        is visible. ProducerFenced when the producer can do nothing more.

        ``prepare_next``: with a second lane, the offsets the next
        transaction sends, sent ahead on that lane while this one commits.
        """
        prepared, self._prepared = self._prepared, None
        lane = self._lanes[self._next] if prepared is None else prepared.lane
        self._next = (self._lanes.index(lane) + 1) % len(self._lanes)
        try:
            if prepared is None:
                lane.begin_transaction()
                covered: set[tuple[str, int]] = set()
            else:
                self._wait(prepared.call)
                covered = {(tp.topic, tp.partition) for tp in prepared.offsets}
            act(lane)
            if missing := [tp for tp in offsets if (tp.topic, tp.partition) not in covered]:
                self._wait(self._send_offsets(lane, missing, group_metadata))
            if prepare_next is not None and len(self._lanes) > 1:
                self._prepare(self._lanes[self._next], prepare_next, group_metadata)
            lane.commit_transaction(30)
        except ProducerFenced:
            raise
        except KafkaException as exc:
            self._abort(lane, offsets, exc)
            return False
        return True

    def transact_behind(
        self,
        offsets: list[TopicPartition],
        group_metadata: object,
        act: Callable[[Producer], None],
        done: Done,
    ) -> None:
        """One transaction as ``transact``'s, committed behind the caller:
        ``act(producer)`` writes on the next lane now, once that lane's
        previous transaction is decided, and the lane's thread sends
        ``offsets`` and commits while the caller goes on. ``done`` gets the
        outcome on the caller's thread (``collect``). The caller sends
        offsets that hold whatever the transactions still committing before
        it come to (the tracker's commit points, tracker.py)."""
        assert self._prepared is None
        index = self._next
        lane, self._next = self._lanes[index], (index + 1) % len(self._lanes)
        while any(c.lane is lane for c in self._committing):
            self._collect_one()
        try:
            lane.begin_transaction()
            act(lane)
        except ProducerFenced:
            raise
        except KafkaException as exc:
            self._abort(lane, offsets, exc)
            done(None)
            return

        def send_and_commit() -> None:
            lane.send_offsets_to_transaction(offsets, group_metadata, self._timeout_s)
            lane.commit_transaction(self._timeout_s)

        call = self._behind[index].submit(send_and_commit)
        deadline = time.monotonic() + self._timeout_s + 1
        self._committing.append(_Committing(lane, offsets, call, done, deadline))

    def collect(self, wait: bool = False, timeout_s: float | None = None) -> None:
        """Hands the outcomes of the transactions committing behind to their
        ``done``, oldest first: those decided, or with ``wait`` all of them,
        each waited for ``timeout_s`` at most (``_wait``). One still running
        past its transaction's life is hung: ProducerFenced, even when no
        later turn needs its lane (its records hold back every reader of
        their partitions, the tracker's own consumer included)."""
        while self._committing and (
            wait
            or self._committing[0].call.finished()
            or time.monotonic() >= self._committing[0].deadline
        ):
            self._collect_one(timeout_s)

    def _collect_one(self, timeout_s: float | None = None) -> None:
        c = self._committing.popleft()
        left = max(0.0, c.deadline - time.monotonic())
        waited = left if timeout_s is None else min(timeout_s, left)
        c.done(c.offsets if self._landed(c.call, c.lane, c.offsets, waited) else None)

    def _landed(
        self, call: Pending, lane: Producer, offsets: list[TopicPartition], timeout_s: float | None
    ) -> bool:
        """Waits for a call in a transaction; False when it failed and the
        transaction was aborted."""
        try:
            self._wait(call, timeout_s)
        except ProducerFenced:
            raise
        except KafkaException as exc:
            self._abort(lane, offsets, exc)
            return False
        return True

    def unprepare(self, timeout_s: float = 10) -> None:
        """Ends what this producer has going before partitions are owned
        anew, revoked or left: what commits behind is waited for (its
        outcomes collected), and the transaction prepared ahead, if any, is
        aborted: its offsets would hold back a new owner of their partitions
        (``consumer.committed`` waits for them, KIP-447). ``timeout_s``: for
        the abort, and at most the transaction's life for its preparation."""
        self.collect(wait=True)
        prepared, self._prepared = self._prepared, None
        if prepared is None:
            return
        if not self._landed(prepared.call, prepared.lane, prepared.offsets, timeout_s):
            return
        try:
            prepared.lane.abort_transaction(timeout_s)
        except KafkaException as exc:
            raise ProducerFenced(exc.args[0]) from exc

    def expire(self) -> None:
        """Aborts a transaction prepared so long ago that nothing used it
        (what it was for was cancelled): well before the broker would, which
        would leave its lane fenced."""
        if self._prepared and time.monotonic() - self._prepared.since > self._timeout_s / 3:
            self.unprepare()

    def _prepare(
        self, lane: Producer, offsets: list[TopicPartition], group_metadata: object
    ) -> None:
        def begin_and_send() -> None:
            lane.begin_transaction()
            lane.send_offsets_to_transaction(offsets, group_metadata, self._timeout_s)

        self._prepared = _Prepared(
            lane,
            offsets,
            self._calls.submit(begin_and_send),
            time.monotonic(),
        )

    def _send_offsets(
        self, lane: Producer, offsets: list[TopicPartition], group_metadata: object
    ) -> Pending:
        """``send_offsets_to_transaction``, off the caller's thread (``_wait``)."""
        return self._calls.submit(
            lambda: lane.send_offsets_to_transaction(offsets, group_metadata, self._timeout_s)
        )

    def _wait(self, call: Pending, timeout_s: float | None = None) -> None:
        """Waits for a ``send_offsets_to_transaction`` (and a commit behind
        it), for the transaction's life: after that the broker aborts it
        anyway. librdkafka ignores that call's timeout while the group
        coordinator it knows is gone (issues #5456 and #5511): a tracker
        whose coordinator was killed waited on it for as long as the broker
        stayed down. The call runs on a thread of its own, so the owner can
        walk away; its producer is then done (a new life fences it as it
        starts, so the call, if it ever ends, commits nothing)."""
        waited = self._timeout_s + 1 if timeout_s is None else min(timeout_s, self._timeout_s + 1)
        if call.wait(waited) is not None:
            self._hung = True
            raise ProducerFenced(
                f"no answer to a transaction's offsets or commit in time ({waited:.1f} s "
                f"more waited; its life is {self._timeout_s:.0f} s)"
            )

    def _abort(self, lane: Producer, offsets: list[TopicPartition], exc: KafkaException) -> None:
        if producer_done(exc):
            raise ProducerFenced(exc.args[0]) from exc
        try:
            lane.abort_transaction(10)
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

    def close(self, flush_timeout: float) -> None:
        """Aborts what was begun ahead (else a next owner of its partitions
        waits for the broker to), delivers what is left to deliver and ends
        the thread of its calls."""
        if self._hung:  # nothing it holds can land (it is fenced), nor may it wait
            self._close_threads(0)
            return
        try:
            self.collect(wait=True, timeout_s=flush_timeout)
            self.unprepare(timeout_s=flush_timeout)
        except KafkaException as exc:
            log.info("a transaction begun ahead or committing is left to the broker: %s", exc)
            if self._hung:
                self._close_threads(0)
                return
        for lane in self._lanes:
            lane.flush(flush_timeout)
        self._close_threads(flush_timeout)

    def _close_threads(self, wait_s: float) -> None:
        for calls in (self._calls, *self._behind):
            calls.close(wait_s=wait_s)
