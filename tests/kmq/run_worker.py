"""A worker as its own process: records each message, then acks it.

`python -m tests.kmq.run_worker JSON FILE [WORK_S [MAX]]`: WORK_S is the work
each message takes (default none), so a kill lands mid-work; MAX is how many
messages one poll asks for (default 100). The value is written to FILE
before the ack, so a kill -9 between the two leaves a recorded message that
the tracker must redeliver: the record never claims an ack that may be lost.
"""

import json
import os
import sys
import time

from kmqadmin.kmq import QueueClient, QueueConfig

if __name__ == "__main__":
    config = QueueConfig(**json.loads(sys.argv[1]))
    fd = os.open(sys.argv[2], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    work_s = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
    at_most = int(sys.argv[4]) if len(sys.argv) > 4 else 100
    with QueueClient(config) as client:
        while True:
            for message in client.poll(at_most, 0.5):
                if work_s:
                    time.sleep(work_s)
                os.write(fd, message.value + b"\n")
                client.ack(message)
