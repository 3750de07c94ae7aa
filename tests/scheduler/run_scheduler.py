"""A scheduler as its own process, for tests that kill -9 it.

`python -m tests.scheduler.run_scheduler JSON`
"""

import json
import logging
import sys

from kmqadmin.scheduler import Scheduler, SchedulerConfig

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    Scheduler(SchedulerConfig(**json.loads(sys.argv[1]))).run()
