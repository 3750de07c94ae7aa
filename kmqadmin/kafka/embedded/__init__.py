"""Apache Kafka run by us on loopback, for `kmq run` without a cluster, `kmq
broker` and the test suite: one KRaft node (broker), several (cluster), and
the child processes that must not outlive us (child); a node's settings
(server_properties), its secured listener (sasl_ssl) and a cluster's
controller quorum (quorum).

May import kmqadmin.kafka.client and kmqadmin.kafka.admin. The cores kmq,
scheduler and pipeline never import it (tests/test_import_graph.py checks it).
"""
