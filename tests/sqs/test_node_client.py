"""The AWS SDK for JavaScript v3 (@aws-sdk/client-sqs, from npm) as a
client of the real endpoint, in node: it recomputes the MD5 of each sent
body and throws on a wrong one, which boto3 never does."""

import json
import os
import subprocess
import uuid
from pathlib import Path

from confluent_kafka import Consumer

from kmqadmin.kafka.embedded.broker import EmbeddedBroker
from tests.sqs.clients import Web, sqs

NODE_CLIENT = Path(__file__).parent / "node"


def test_the_javascript_sdk_sends_lists_and_reads_attributes(
    web: Web, kafka: EmbeddedBroker
) -> None:
    name = f"node-{uuid.uuid4().hex[:8]}"
    url = sqs(web, "boss").create_queue(QueueName=name)["QueueUrl"]
    key = web.keys["worker"]
    run = subprocess.run(
        ["node", "client.mjs"],
        cwd=NODE_CLIENT,
        env={
            "PATH": os.environ["PATH"],
            "SQS_ENDPOINT": f"http://127.0.0.1:{web.port}/sqs",
            "QUEUE_URL": url,
            **key,
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    assert answer["batch"] == {"successful": 3, "failed": 0}
    assert url in answer["queues"]
    assert answer["attributes"]["VisibilityTimeout"] == "30"
    assert answer["attributes"]["QueueArn"].endswith(f":{name}")
    assert uuid.UUID(answer["sent"]["MessageId"])
    consumer = Consumer(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "group.id": f"read-{uuid.uuid4().hex}",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([name])
    values = []
    for _ in range(50):
        values += [r.value() for r in consumer.consume(4, 0.2) if r.error() is None]
        if len(values) == 4:
            break
    consumer.close()
    assert sorted(values) == sorted(
        ["from node: ünïcödé 🎉\r\n".encode(), b"node 0", b"node 1", b"node 2"]
    )
