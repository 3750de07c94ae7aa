"""A worker as its own process that rejects every message whose number ends
in 0 and acks the rest, noting each value in FILE first; each takes 1 ms
of work, so a kill lands mid-batch, between letters and their ACCEPTs.

`python -m tests.kmq.run_rejecting_worker JSON FILE`; see run_worker.
"""

import json
import os
import sys
import time

from kmqadmin.kmq import QueueClient, QueueConfig

if __name__ == "__main__":
    config = QueueConfig(**json.loads(sys.argv[1]))
    fd = os.open(sys.argv[2], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    with QueueClient(config) as client:
        while True:
            for message in client.poll(100, 0.5):
                time.sleep(0.001)
                os.write(fd, message.value + b"\n")
                if message.value.endswith(b"0"):
                    client.reject(message, reason="poison")
                else:
                    client.ack(message)
