"""A tracker as its own process, for tests that kill -9 or pause it.

`python -m tests.kmq.run_tracker JSON`

Its stats go to stdout as a JSON line every 0.1 s, so a test can tell what
the process holds before it stops it.
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
        print(json.dumps(dataclasses.asdict(tracker.stats())), flush=True)
        time.sleep(0.1)
