"""What every Kafka client of ours is built from: the one builder of
librdkafka configurations (config), their log (client_log), cluster security
and the masking of secrets (security, masking, access), setup errors
(errors), epoch milliseconds (clock), the checked producer, the one read of
a record's headers (record) and, below confluent-kafka's Python API, the
bundled librdkafka (librdkafka); with Kafka's own bounds (bounds,
topic_names) and the safe parse of untrusted JSON (json_payload).

The bottom layer: it imports no other kmqadmin package, not even another
package of kmqadmin.kafka (tests/test_import_graph.py checks it).
"""
