"""CheckedProducer's confirmed produce on a real broker, shared by many
threads as a web process's requests share one: each caller gets the outcome
of each of its own records, whichever caller's poll served the report."""

import threading

from confluent_kafka import Message as KafkaMessage

from kmqadmin.kafka.admin.topics import ensure_topics
from kmqadmin.kafka.client.checked_producer import CheckedProducer
from kmqadmin.kafka.embedded.broker import EmbeddedBroker

CALLERS = 8
CALLS = 25


def test_callers_sharing_a_producer_each_get_their_own_reports(
    kafka: EmbeddedBroker, topic: str
) -> None:
    ensure_topics(kafka.bootstrap_servers, {topic: 3})
    producer = CheckedProducer(kafka.bootstrap_servers, confirm_each=True)
    outcomes: dict[int, list] = {i: [] for i in range(CALLERS)}

    def caller(i: int) -> None:
        for n in range(CALLS):
            records = [{"key": f"{i}".encode(), "value": f"{i}-{n}-{j}".encode()} for j in range(3)]
            outcomes[i] += producer.produce_all_confirmed(topic, records, 30)

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(CALLERS)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert not any(thread.is_alive() for thread in threads), "a caller never got its reports"
    finally:
        producer.close()
    for i, got in outcomes.items():
        assert all(isinstance(o, KafkaMessage) and o.error() is None for o in got), got[:3]
        values = [o.value().decode() for o in got]
        assert values == [f"{i}-{n}-{j}" for n in range(CALLS) for j in range(3)]
    where = {(o.partition(), o.offset()) for got in outcomes.values() for o in got}
    assert len(where) == CALLERS * CALLS * 3  # each its own place on the log
