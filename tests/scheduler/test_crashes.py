"""A schedule fires once: kill -9 the scheduler while it fires, again and again."""

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kmqadmin.scheduler import ScheduleClient, SchedulerConfig
from tests.chaos import KILLS, Victim, last_json_line, log_tail, pause_mid_transaction, report
from tests.process import ROOT, kill9, wait_for
from tests.schedule_helpers import fired_ids, in_seconds


def spawn(config: SchedulerConfig, log: Path, slot: str | None = None) -> subprocess.Popen:
    """stderr to ``log``, the stats lines to ``log`` with suffix ``.out``;
    ``slot`` as tests/scheduler/run_scheduler.py takes it."""
    fields = dataclasses.asdict(config)
    with log.open("ab") as stderr, log.with_suffix(".out").open("ab") as stdout:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.scheduler.run_scheduler",
                json.dumps(fields, default=sorted),
                *([slot] if slot else []),
            ],
            cwd=ROOT,
            stdout=stdout,
            stderr=stderr,
        )


def test_kill_9_while_firing_loses_and_doubles_nothing(
    schedules: SchedulerConfig, target: str, tmp_path: Path
) -> None:
    """500 schedules missed before the start, then a wave of 100 due over the
    next few seconds after every kill; the scheduler is killed at random
    points of its firing, KMQ_CHAOS_KILLS times."""
    ids = [f"missed{i}" for i in range(500)]
    with ScheduleClient(schedules) as client:
        for sid in ids:
            client.schedule(sid, in_seconds(-10), target, sid.encode())
        client.flush()
        victim = Victim(
            # Restarted in its slot, as a supervised worker is.
            lambda log: spawn(schedules, log, "victim"),
            tmp_path / "scheduler.log",
            "scheduler assigned",
            11,
        )
        waves = 0
        try:

            def settled() -> bool:
                nonlocal waves
                if waves <= victim.kills and waves < KILLS:
                    for i in range(100):
                        ids.append(sid := f"w{waves}-{i}")
                        client.schedule(sid, in_seconds(1 + 4 * i / 100), target, sid.encode())
                    client.flush()
                    waves += 1
                victim.step(KILLS)
                return victim.kills >= KILLS

            wait_for(settled, 60 + 15 * KILLS, f"{KILLS} kills while firing", every=0.05)
            wait_for(lambda: fired_ids(schedules, target).keys() >= set(ids), 120, "every one")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; its log ends:\n{victim.log_tail()}") from exc
        finally:
            victim.stop()
    fires = fired_ids(schedules, target)
    report(
        "scheduler",
        kills=victim.kills,
        scheduled=len(ids),
        fired=len(fires),
        missed=len(set(ids) - fires.keys()),
        duplicate_fires=sum(n - 1 for n in fires.values()),
    )
    assert victim.kills == KILLS
    assert set(ids) - fires.keys() == set()
    assert {sid: n for sid, n in fires.items() if n > 1} == {}


# Short enough to outlast in a test: the zombie's open transaction and the
# records it holds expire while it is stopped.
ZOMBIE_TRANSACTION_TIMEOUT_MS = 10_000


@pytest.mark.parametrize("past_its_transaction_timeout", [False, True])
def test_a_paused_scheduler_resumed_after_a_takeover_fires_nothing(
    schedules: SchedulerConfig, target: str, tmp_path: Path, past_its_transaction_timeout: bool
) -> None:
    """The zombie: a scheduler stopped (SIGSTOP) inside a firing transaction,
    its partitions taken over by another, then resumed: it goes on with that
    firing. The heir fires nothing on those partitions before the zombie's
    transaction is decided (its barrier waits behind it), and what the
    zombie begins after its group moved on is refused (KIP-447): every
    schedule fires once. Stopped past its transaction timeout, the broker
    has aborted its firing: its producer is fenced, and it starts a new life
    as a new member."""
    schedules = dataclasses.replace(
        schedules, kafka_config={"transaction.timeout.ms": ZOMBIE_TRANSACTION_TIMEOUT_MS}
    )
    zombie_log, heir_log = tmp_path / "zombie.log", tmp_path / "heir.log"
    zombie, heir = spawn(schedules, zombie_log), None
    ids = [f"s{i}" for i in range(6_000)]
    try:
        with ScheduleClient(schedules) as client:
            wait_for(lambda: "scheduler assigned" in zombie_log.read_text(), 60, "the zombie")
            for i, sid in enumerate(ids):  # 300 a second for 20 s
                client.schedule(sid, in_seconds(1 + i / 300), target, sid.encode())
            client.flush()
            wait_for(lambda: _stats(zombie_log)["fired"] > 0, 60, "a busy zombie")
            pause_mid_transaction(zombie, schedules.bootstrap_servers, schedules.topic, 3)
            heir = spawn(schedules, heir_log)
            wait_for(lambda: _stats(heir_log)["fired"] > 0, 60, "the heir firing")
            if past_its_transaction_timeout:
                time.sleep(ZOMBIE_TRANSACTION_TIMEOUT_MS / 1000)  # the stall itself
            joined = zombie_log.read_text().count("scheduler assigned")
            os.kill(zombie.pid, signal.SIGCONT)
            wait_for(
                lambda: zombie_log.read_text().count("scheduler assigned") > joined,
                60,
                "the zombie to go on with its firing, then join again",
                evidence=lambda: log_tail(zombie_log),
            )
            wait_for(lambda: fired_ids(schedules, target).keys() == set(ids), 120, "all fired")
    finally:
        kill9(zombie)
        if heir is not None:
            kill9(heir)
    assert {sid: n for sid, n in fired_ids(schedules, target).items() if n > 1} == {}


def _stats(log: Path) -> dict:
    """The last whole stats line a run_scheduler process printed."""
    return last_json_line(log.with_suffix(".out")) or {"held": 0, "armed": 0, "fired": 0}
