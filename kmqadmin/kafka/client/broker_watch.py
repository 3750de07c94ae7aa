"""BrokerWatch: tells a client that has been without a broker, or out of its group, too long.

librdkafka (since 2.10) drops the brokers a Metadata answer does not list.
A broker that stalled past its session with the KRaft controller answers,
for a moment after it resumes, with itself fenced: with no broker at all. A
client that asked just then is left with none, and with librdkafka 2.16 the
handle of the dropped broker never finishes going (librdkafka issue #5511,
"group coordinator rediscovery after broker decommission"), so the client
neither re-bootstraps nor reconnects. A group consumer in that state stays
out of its group for good and says nothing: the demo's `orders` worker did
so after a 30 s SIGSTOP of the broker, while the `emails` one beside it,
which asked a moment later, rejoined.

The same issue can leave a group consumer with a broker up (the bootstrap
one, found again) while its group handler waits for a coordinator it never
reaches: out of its group just as silently. So for a group consumer, whose
statistics carry a ``cgrp`` section, being in touch also takes that handler
being ``up`` (its coordinator known and connected).

Up is not in the group, though. A consumer created while the broker is
stopped (the replacement of one lost) asks for the coordinator when the
broker resumes; if the broker is still fenced, the first Metadata answer
lists no broker and the bootstrap handle stays. The group handler comes up,
and the join waits for the subscribed topic's metadata (join state
``wait-metadata``), asked of the bootstrap handle. The coordinator
connection's own Metadata answer then lists the broker, librdkafka
decommissions the bootstrap handle with that request in flight ("Broker
handle destroyed without termination"), and the topic stays marked as
being requested: every later refresh is skipped ("already being
requested"), and the join never happens. The demo's `orders` worker sat
so for 150 s after a 33 s SIGSTOP, its handler ``up``, its broker ``UP``,
its group ``Empty`` (librdkafka's debug log; the `emails` worker, replaced
ten seconds earlier, rejoined). A consumer whose session timed out with an
offset commit in flight waits out of its group too, for the commit
(``wait-unassign-to-complete``; 11 to 25 s of a 30 s stall, the handler
``up`` again and again). So the handler must also be in a join state where
the group has the member or is letting it in (IN_GROUP); one stuck before
that for LOST_S is replaced.

The watch reads the client's statistics, which librdkafka hands over when
the client is polled, and remembers when the client was last in touch: one
of its brokers (not the logical group or transaction coordinator handles)
up, and its group handler up and in its group if it has one. Once
``lost()``, the client's owner replaces it. A cluster that is really away
makes that happen once per LOST_S, which costs a client's connection
attempts and nothing else.
"""

import contextlib
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

STATS_MS = 2000
LOST_S = 15.0
# librdkafka's sources of a broker handle that serve requests for anything.
_REAL = frozenset({"learned", "configured"})
# A group handler's join states in which the member is in its group, or the
# broker is letting it in (it holds a JoinGroup until every member has
# rejoined, up to the rebalance timeout), or the application is handed a
# rebalance it serves at its next poll. The others (init, wait-metadata,
# wait-unassign-to-complete, wait-incr-unassign-to-complete) are steps of
# the client's own that take moments unless something is stuck.
IN_GROUP = frozenset({"steady", "wait-join", "wait-sync", "wait-assign-call", "wait-unassign-call"})
_NO_GROUP = {"state": "up", "join_state": "steady"}


class BrokerWatch:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.lost_after_s = LOST_S
        self._clock = clock
        self._last_up = clock()  # a new client is given its first LOST_S

    def settings(self) -> dict[str, Any]:
        """What the watched client's configuration needs."""
        return {"statistics.interval.ms": STATS_MS, "stats_cb": self.on_stats}

    def on_stats(self, stats_json: str) -> None:
        try:
            stats = json.loads(stats_json)
            brokers = stats["brokers"].values()
            group = stats.get("cgrp", _NO_GROUP)
        except (ValueError, TypeError, KeyError, AttributeError):
            return  # not librdkafka's statistics: nothing learned
        if not (isinstance(group, dict) and _in_group(group)):
            return
        if any(_up(broker) for broker in brokers if isinstance(broker, dict)):
            self._last_up = self._clock()

    def down_for_s(self) -> float:
        return self._clock() - self._last_up

    def lost(self) -> bool:
        return self.down_for_s() >= self.lost_after_s

    def raise_if_lost(self) -> None:
        """For a service whose life ends on a Kafka error and starts again
        with new clients (ownership/service.py)."""
        if self.lost():
            down = f"no broker or group for {self.down_for_s():.0f} s; a new life with new clients"
            raise KafkaException(KafkaError(KafkaError._ALL_BROKERS_DOWN, down))


def _up(broker: dict[str, Any]) -> bool:
    return broker.get("state") == "UP" and broker.get("source") in _REAL


def _in_group(group: dict[str, Any]) -> bool:
    return group.get("state") == "up" and group.get("join_state") in IN_GROUP


def abandon(consumer: Consumer, after: threading.Thread | None = None) -> None:
    """Closes a consumer given up on, on a daemon thread: closing a client
    left without brokers may never return, and must not hold up its
    replacement. Its rebalance callbacks run on that thread. ``after``: a
    call still inside the consumer (bounded_call.py), which must return
    before the consumer may be destroyed."""

    def close() -> None:
        if after is not None:
            after.join()
        with contextlib.suppress(KafkaException, RuntimeError):
            consumer.close()

    threading.Thread(target=close, name="kmq-abandoned-consumer", daemon=True).start()


Rebalanced = Callable[[Consumer, list[TopicPartition]], None]


def if_current(current: Callable[[], Consumer | None], callback: Rebalanced) -> Rebalanced:
    """``callback`` for the owner's ``current`` consumer only: one abandoned
    runs its rebalance callbacks on its closing thread, maybe while its
    replacement owns the partitions, and must not act on the replacement's."""

    def called(consumer: Consumer, partitions: list[TopicPartition]) -> None:
        if consumer is current():
            callback(consumer, partitions)

    return called


def close_or_abandon(
    consumer: Consumer, watch: BrokerWatch, last_words: Callable[[], None] = lambda: None
) -> None:
    """Closes ``consumer`` after ``last_words`` (a final commit, say), unless
    ``watch`` has lost it every broker: then nothing is said to a cluster it
    cannot reach, and it is abandoned, since closing a consumer in that state
    may never return."""
    if watch.lost():
        abandon(consumer)
        return
    try:
        last_words()
    finally:
        consumer.close()
