"""A tracker as its own process, for tests that kill -9 or pause it.

`python -m tests.kmq.run_tracker JSON`

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
    tracker = RedeliveryTracker(QueueConfig(**json.loads(sys.argv[1])))
    tracker.start()
    while True:
        stats = dataclasses.asdict(tracker.stats())
        print(json.dumps(stats | {"restarts": tracker.restarts}), flush=True)
        time.sleep(0.1)
