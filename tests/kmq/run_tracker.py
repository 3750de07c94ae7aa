"""A tracker as its own process, for tests that kill -9 it.

`python -m tests.kmq.run_tracker JSON`
"""

import json
import logging
import sys

from kmqadmin.kmq import QueueConfig, RedeliveryTracker

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    RedeliveryTracker(QueueConfig(**json.loads(sys.argv[1]))).run()
