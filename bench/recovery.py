"""How long a killed owner's open transaction holds back read_committed readers.

An owner killed with kill -9 mid-transaction leaves that transaction open:
no read_committed reader of the partitions it wrote to reads past it until
it is aborted. Who aborts it, and when, is what the ownership designs differ
in, so each is measured here on the same broker in the same run, with the
same dying owner: a child process that joins the group, begins a
transaction on the partition it was assigned, writes to it, and is killed.
What is measured is the time from the kill until the partition's last
stable offset reaches its end.

- ``per_partition`` (the design before issue 28): the transactional id is
  the partition's, so whoever is assigned the partition next aborts it with
  ``init_transactions``. Restarted or not, that is the heir's assignment,
  after the group has noticed the death (its session timeout).
- ``per_owner`` (this design): the transactional id is the owner's slot's.
  ``restart``: the owner comes back in its slot and its first
  ``init_transactions`` aborts it, before it even joins; ``no_restart``: the
  slot never comes back, and the broker aborts the transaction once it has
  outlived its timeout, at its next check for expired transactions; the
  timeout is the session timeout less the heartbeat interval and the
  broker's interval between those checks (transaction_timeout.py), so that
  is done by the time the group has noticed the death.
"""

import multiprocessing
import os
import signal
import time
import uuid
from collections.abc import Callable
from functools import partial
from multiprocessing.connection import Connection

from confluent_kafka import Consumer, IsolationLevel, Producer, TopicPartition
from confluent_kafka.admin import OffsetSpec

from kmqadmin.kafka.admin.topics import admin_client, ensure_topics
from kmqadmin.kafka.client.config import consumer_config, producer_config, session_timeout_s
from kmqadmin.kafka.ownership.transaction_timeout import cleanup_interval_ms, transaction_timeout_ms

TIMEOUT_S = 60.0


def _dying_owner(
    bootstrap: str, topic: str, group: str, txn_id: str, producing: dict, ready: Connection
) -> None:
    """Joins ``group``, opens a transaction on partition 0, says so, waits to be killed."""
    consumer = Consumer(consumer_config(bootstrap, group))
    consumer.subscribe([topic])
    while not consumer.assignment():
        consumer.poll(0.1)
    producer = Producer(producer_config(bootstrap, txn_id, producing))
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"open", partition=0)
    producer.flush(10)
    ready.send(True)
    while True:
        consumer.poll(0.1)  # a live member until the kill


def _lso_at_end(admin, topic: str) -> bool:
    tp = {TopicPartition(topic, 0): OffsetSpec.latest()}
    ends = []
    for level in (IsolationLevel.READ_COMMITTED, IsolationLevel.READ_UNCOMMITTED):
        [answer] = admin.list_offsets(tp, isolation_level=level, request_timeout=5).values()
        ends.append(answer.result().offset)
    return ends[0] == ends[1]


def _held_back(admin, topic: str, since: float) -> float | None:
    while not _lso_at_end(admin, topic):
        if time.monotonic() - since > TIMEOUT_S:
            return None
        time.sleep(0.02)
    return round(time.monotonic() - since, 2)


def one_kill(bootstrap: str, design: str, case: str) -> float | None:
    """Seconds readers of the killed owner's partition were held back."""
    topic = f"recovery-{uuid.uuid4().hex[:8]}"
    ensure_topics(bootstrap, {topic: 1})
    group, slot = f"{topic}-owners", "slot-a"
    if design == "per_partition":
        # That design left the transaction timeout at the client's default.
        txn_id, producing = f"kmq-owner-{topic}-0", {}
    else:
        timeout_ms = transaction_timeout_ms(bootstrap, {})
        txn_id, producing = f"kmq-{group}-{slot}", {"transaction.timeout.ms": timeout_ms}
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    args = (bootstrap, topic, group, txn_id, producing, child)
    owner = ctx.Process(target=_dying_owner, args=args)
    owner.start()
    if not parent.poll(TIMEOUT_S):
        owner.kill()
        return None
    parent.recv()
    admin = admin_client(bootstrap)
    os.kill(owner.pid, signal.SIGKILL)
    killed = time.monotonic()
    owner.join()
    if design == "per_owner" and case == "restart":
        Producer(producer_config(bootstrap, txn_id)).init_transactions(30)
    elif design == "per_partition":
        # The heir (or the owner restarted: the same) is assigned the
        # partition once the group has evicted the dead member.
        heir = Consumer(consumer_config(bootstrap, group))
        heir.subscribe([topic])
        while not heir.assignment():
            heir.poll(0.05)
        Producer(producer_config(bootstrap, txn_id)).init_transactions(30)
        heir.close()
    return _held_back(admin, topic, killed)


def recovery(rounds: int) -> Callable[[str], dict]:
    return partial(_recovery, rounds=rounds)


def _recovery(bootstrap: str, rounds: int) -> dict:
    cases = {
        "per_partition": ["restart_or_not"],
        "per_owner": ["restart", "no_restart"],
    }
    result: dict = {
        "session_timeout_s": session_timeout_s(),
        "transaction_cleanup_interval_ms": cleanup_interval_ms(bootstrap, {}),
        "per_owner_transaction_timeout_ms": transaction_timeout_ms(bootstrap, {}),
        "rounds": rounds,
    }
    for design, design_cases in cases.items():
        result[design] = {
            case: sorted(one_kill(bootstrap, design, case) or -1 for _ in range(rounds))
            for case in design_cases
        }
    return result
