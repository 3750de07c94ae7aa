"""A schedule fires once through a broker stalled past its transactions' timeout.

The scheduler fires back to back on two producers: while one commits, the
other begins the next transaction and sends its offsets
(kafka/ownership/owner_producer.py). A broker stopped with SIGSTOP for
longer than the transaction timeout (4 s on the embedded broker,
kafka/ownership/transaction_timeout.py) finds both open when it resumes,
and aborts them once they have outlived it, while the scheduler's calls
time out and its group may have moved on. Counted on the target topic:
every schedule fired, none twice.
"""

import os
import signal
import time
import uuid

from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from kmqadmin.scheduler import ScheduleClient, Scheduler, SchedulerConfig
from tests.process import wait_for
from tests.schedule_helpers import PARTITIONS, fired_ids, in_seconds

SCHEDULES = 2000
EVERY_S = 0.01  # due one after another, so a turn always prepares the next
STALL_S = 10  # over twice the transaction timeout


def test_a_broker_stalled_while_firing_loses_and_doubles_nothing(
    own_broker: EmbeddedBroker,
) -> None:
    name = f"stall-{uuid.uuid4().hex[:8]}"
    config = SchedulerConfig(
        bootstrap_servers=own_broker.bootstrap_servers, topic=name, group_id=f"{name}-scheduler"
    )
    config.ensure_topics(partitions=PARTITIONS)
    target = f"{name}-target"
    ensure_topics(own_broker.bootstrap_servers, {target: PARTITIONS})
    ids = [f"s{i}" for i in range(SCHEDULES)]
    with ScheduleClient(config) as client:
        for i, sid in enumerate(ids):
            client.schedule(sid, in_seconds(3 + i * EVERY_S), target, sid.encode())
        client.flush()
    assert own_broker.process is not None
    scheduler = Scheduler(config)
    scheduler.start()
    try:
        wait_for(lambda: scheduler.stats().fired >= SCHEDULES // 5, 60, "firing under way")
        os.kill(own_broker.process.pid, signal.SIGSTOP)
        try:
            time.sleep(STALL_S)  # the stall itself, not a wait for a condition
        finally:
            os.kill(own_broker.process.pid, signal.SIGCONT)
        wait_for(lambda: fired_ids(config, target).keys() >= set(ids), 120, "every schedule")
    finally:
        scheduler.stop()
    fires = fired_ids(config, target)
    print(f"stall {STALL_S} s: restarts {scheduler.restarts}, fired {len(fires)}")
    assert {sid: n for sid, n in fires.items() if n > 1} == {}
    assert fires.keys() == set(ids)
