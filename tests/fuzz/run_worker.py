"""A worker for the fuzz suite, as its own process: a crash of QueueClient on
a hostile record ends it, and the test sees that instead of dying with it.

`python -m tests.fuzz.run_worker JSON FILE`

A well-formed message's value says what to do with it
(``wf:<hex>:ack|reject|drop``); acked ones are written to FILE before the
ack. Anything else is a hostile record: dropped on its first delivery (so
the tracker's copy path and the scheduler's backoff carry it too), acked on
a later one. Every message's id and headers are read, as a real worker does.
"""

import json
import os
import re
import sys

from kmqadmin.kmq import Message, QueueClient, QueueConfig

WELL_FORMED = re.compile(rb"wf:[0-9a-f]+:(ack|reject|drop)")


def handle(client: QueueClient, message: Message, acked: int) -> None:
    message.id, message.headers  # noqa: B018 - what a worker reads to de-duplicate and route
    intent = WELL_FORMED.fullmatch(message.value or b"")
    if intent is None:
        if message.delivery_count >= 2:
            client.ack(message)
    elif intent[1] == b"ack":
        os.write(acked, message.value + b"\n")
        client.ack(message)
    elif intent[1] == b"reject":
        client.reject(message, "fuzz")


if __name__ == "__main__":
    config = QueueConfig(**json.loads(sys.argv[1]))
    acked = os.open(sys.argv[2], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    with QueueClient(config) as client:
        print("worker polling", file=sys.stderr, flush=True)
        while True:
            for message in client.poll(100, 0.2):
                handle(client, message, acked)
