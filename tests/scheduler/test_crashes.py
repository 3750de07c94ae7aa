"""A schedule fires once: kill -9 the scheduler while it fires, again and again."""

import dataclasses
import json
import random
import subprocess
import sys
import time

from kmqadmin.scheduler import ScheduleClient, SchedulerConfig
from tests.process import ROOT, kill9, wait_for
from tests.scheduler.conftest import fired_ids, in_seconds


def spawn(config: SchedulerConfig) -> subprocess.Popen:
    fields = {k: v for k, v in dataclasses.asdict(config).items() if k != "kafka_config"}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.scheduler.run_scheduler", json.dumps(fields)], cwd=ROOT
    )


def test_kill_9_while_firing_loses_and_doubles_nothing(
    schedules: SchedulerConfig, target: str
) -> None:
    """1,000 schedules missed before the start, then five waves of 400 due over
    the next few seconds; after each wave the scheduler is killed at a random
    point once it has been seen firing."""
    ids = [f"missed{i}" for i in range(1000)]
    rng = random.Random(11)
    with ScheduleClient(schedules) as client:
        for sid in ids:
            client.schedule(sid, in_seconds(-10), target, sid.encode())
        scheduler = spawn(schedules)
        try:
            for wave in range(5):
                for i in range(400):
                    ids.append(sid := f"w{wave}-{i}")
                    client.schedule(sid, in_seconds(2 + 4 * i / 400), target, sid.encode())
                client.flush()
                before = fired_ids(schedules, target).total()
                wait_for(lambda n=before: fired_ids(schedules, target).total() > n, 90, "firing")
                time.sleep(rng.uniform(0, 0.5))  # a random point in its firing, not a wait
                kill9(scheduler)
                scheduler = spawn(schedules)
            wait_for(lambda: fired_ids(schedules, target).keys() == set(ids), 120, "every one")
        finally:
            kill9(scheduler)
    assert {sid: n for sid, n in fired_ids(schedules, target).items() if n > 1} == {}
