"""Records shown to people in the console: browsing a partition (browse),
following a topic live (tail), the filters and masking applied on the way
(record_filter, payload_masking), schema-registry decoding (schema_decoding)
and the raw bytes of a record's headers (raw_record).

May import kmqadmin.kafka.client and kmqadmin.kafka.admin. Only the apps
(console, api) use it: the cores kmq, scheduler and pipeline never import it
(tests/test_import_graph.py checks it).
"""
