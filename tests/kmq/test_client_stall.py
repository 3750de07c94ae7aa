"""A worker's QueueClient through a broker stopped (SIGSTOP) for longer than
its consumer may be out of touch (kafka/client/broker_watch.py): once the
broker runs again, the client has its partitions back and delivers.

`kmq run`'s outage test (tests/test_run_outages.py) proves the same with the
whole product for 30 s; this one is the client alone, its watch's limit cut
to LOST_S, a few stalls of different lengths in a minute or so. Each
replaces the consumer while the broker is stopped, and the longest outlasts
the broker's KRaft session (9 s), so the replacement's first answer may
come from a fenced broker: what left the demo's `orders` worker out of its
group for good (broker_watch.py's docstring). Messages are sent throughout,
one per poll, so a stall often begins with an offset commit in flight too.
That is a race, not a certainty: the test passed on the code before the fix.
"""

import os
import signal
import time
import uuid

import pytest

from kmqadmin.kafka.client import broker_watch
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.kmq import QueueClient, QueueProducer
from tests.process import wait_for
from tests.queue_helpers import new_queue

LOST_S = 3.0
PARTITIONS = 3
# Past the limit once, twice, and with the session long timed out.
STALLS_S = (1.5 * LOST_S, 2.5 * LOST_S, 4 * LOST_S)
# A replaced consumer's group waits out its predecessor's 6 s session.
RESUMES_WITHIN_S = 15
AFTER = 30  # messages sent once the broker runs again, all to be delivered


def test_a_worker_stalled_past_its_watch_gets_its_partitions_back(
    own_broker: EmbeddedBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(broker_watch, "LOST_S", LOST_S)
    assert own_broker.process is not None
    broker = own_broker.process.pid
    queue = new_queue(own_broker.bootstrap_servers, f"stall-{uuid.uuid4().hex[:8]}", PARTITIONS)
    producer = QueueProducer(queue)
    sent: list[int] = []
    delivered: set[bytes] = set()
    resumed = []
    with QueueClient(queue) as client:

        def work() -> None:
            """One message sent (round the partitions), one poll worked."""
            n = len(sent)
            producer.send(f"m{n}".encode(), partition=n % PARTITIONS)
            sent.append(n)
            for message in client.poll(100, 0.05):
                client.ack(message)
                delivered.add(message.value)

        def worked(first: int) -> bool:
            work()
            return {f"m{n}".encode() for n in range(first, first + AFTER)} <= delivered

        wait_for(lambda: worked(0), 60, "deliveries before the stalls", every=0)
        for stall_s in STALLS_S:
            os.kill(broker, signal.SIGSTOP)
            try:
                stall_ends = time.monotonic() + stall_s
                while time.monotonic() < stall_ends:  # the stall itself, the worker polling on
                    work()
            finally:
                os.kill(broker, signal.SIGCONT)
            back, first = time.monotonic(), len(sent)
            wait_for(
                lambda first=first: worked(first),
                RESUMES_WITHIN_S,
                f"every partition delivering after a {stall_s:.1f} s stall",
                every=0,
            )
            resumed.append(round(time.monotonic() - back, 1))
    print(f"stalls {STALLS_S} s: delivering again after {resumed} s")
