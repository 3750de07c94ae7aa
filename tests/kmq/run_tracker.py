"""A tracker as its own process, for tests that kill -9 or pause it.

`python -m tests.kmq.run_tracker JSON [SLOT]`

SLOT names it among the group's owners (kafka/ownership/owned.py): a test
that kills it and starts it again passes the same one, as a supervisor
restarting a worker does; without, it is a new owner every time.

Its stats go to stdout as a JSON line every 0.1 s, with how many times its
loop crashed and restarted, so a test can tell what the process holds before
it stops it, and whether it ever fell over.
"""

import dataclasses
import json
import logging
import sys
import time

from kmqadmin.kmq import QueueConfig, RedeliveryTracker

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    slot = sys.argv[2] if len(sys.argv) > 2 else None
    tracker = RedeliveryTracker(QueueConfig(**json.loads(sys.argv[1])), slot=slot)
    tracker.start()
    while True:
        stats = dataclasses.asdict(tracker.stats())
        print(json.dumps(stats | {"restarts": tracker.restarts}), flush=True)
        time.sleep(0.1)
