"""Redeliveries committed behind the tracker's loop, through a broker
stalled past their transactions' timeout.

The tracker writes a turn's copies while the turn before commits, on two
producers (kafka/ownership/owner_producer.py's ``transact_behind``). A
broker stopped with SIGSTOP for longer than the transaction timeout (4 s on
the embedded broker) finds both open when it resumes and aborts them once
they have outlived it, while the tracker's calls time out: its life ends,
or the partitions of an aborted redelivery are read again. The worker is
slow and takes few messages a poll, so deadlines fall one after another and
redeliveries overlap; the messages come from another producer's batches
(the Java client's partitioner, linger and lz4) over 12 partitions.
Counted on the queue topic: every message acked, no
(kmq-id, attempt) copied twice.
"""

import os
import signal
import time
import uuid

from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueClient, RedeliveryTracker
from kmqadmin.kmq.config import MarkerFormat
from tests.process import wait_for
from tests.queue_helpers import JAVA_STYLE, copies, new_queue, send_as

MESSAGES = 1500
PARTITIONS = 12
STALL_S = 8  # twice the transaction timeout


def test_redeliveries_through_a_stalled_broker_lose_and_double_nothing(
    own_broker: EmbeddedBroker, marker_format: MarkerFormat
) -> None:
    name = f"stall-{uuid.uuid4().hex[:8]}"
    queue = new_queue(
        own_broker.bootstrap_servers,
        name,
        PARTITIONS,
        max_redeliveries=1000,
        marker_format=marker_format,
    )
    send_as(queue, MESSAGES, JAVA_STYLE)
    assert own_broker.process is not None
    tracker = RedeliveryTracker(queue)
    tracker.start()
    acked: set[bytes] = set()
    try:
        with QueueClient(queue) as client:

            def work() -> int:
                """3 ms a message; first deliveries dropped (a worker that
                died with them), copies acked."""
                for m in client.poll(20, 0.05):
                    time.sleep(0.003)  # the work itself
                    if m.delivery_count >= 2:
                        client.ack(m)
                        acked.add(m.value)
                return len(acked)

            def redelivering() -> bool:
                work()
                return tracker.stats().redelivered >= MESSAGES // 5

            wait_for(redelivering, 60, "redeliveries under way", every=0)
            assert tracker.stats().redelivered < MESSAGES  # the stall falls mid-stream
            os.kill(own_broker.process.pid, signal.SIGSTOP)
            try:
                time.sleep(STALL_S)  # the stall itself, not a wait for a condition
            finally:
                os.kill(own_broker.process.pid, signal.SIGCONT)
            wait_for(lambda: work() >= MESSAGES, 180, "every message acked", every=0)
    finally:
        tracker.stop()
    copied = copies(queue, PARTITIONS)
    print(f"{marker_format}: restarts {tracker.restarts}, copies {copied.total()}")
    assert {copy: n for copy, n in copied.items() if n > 1} == {}
    assert acked == {f"m{i}".encode() for i in range(MESSAGES)}
