"""A scheduler as its own process, for tests that kill -9 or pause it.

`python -m tests.scheduler.run_scheduler JSON [SLOT]`

SLOT: as tests/kmq/run_tracker.py's.

Every 0.1 s it prints a JSON line with how many schedules it holds, how
many of those are armed (read back, to fire when due), how many it fired
and how many times its loop crashed and restarted, so a test can stop it
while it holds work, or tell that it fell over.
"""

import json
import logging
import sys
import time

from kmqadmin.scheduler import Scheduler, SchedulerConfig

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    slot = sys.argv[2] if len(sys.argv) > 2 else None
    scheduler = Scheduler(SchedulerConfig(**json.loads(sys.argv[1])), slot=slot)
    scheduler.start()
    while True:
        stats = scheduler.stats()
        armed = sum(len(s.armed) for s in list(scheduler._states.values()))
        counts = {"held": stats.held, "armed": armed, "fired": stats.fired}
        print(json.dumps(counts | {"restarts": scheduler.restarts}), flush=True)
        time.sleep(0.1)
