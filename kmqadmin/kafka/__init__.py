"""Shared Kafka plumbing, one package per concept; both cores (kmq/,
scheduler/) and the Django apps build their clients here so timeouts and
defaults are decided once.

- client/: what every client is built from (configs, security, errors,
  clock, record headers); the bottom layer, importing no other package here.
- admin/: topics, consumer and share groups, the offset reset, and reads of
  offsets and records by offset. Imports client, protocol.
- ownership/: long-running partition owners (tracker, scheduler): fencing,
  barrier, the service loop. Imports client.
- inspect/: records shown to people (browse, tail, filters, masking, schema
  decoding). Imports client, admin. Never imported by kmq, scheduler,
  pipeline.
- embedded/: the embedded Apache Kafka broker and cluster, and their child
  processes. Imports client, admin. Never imported by kmq, scheduler,
  pipeline.
- protocol/: our KIP-932 message schemas for kafka-python, and the
  librdkafka-to-kafka-python config (config). Imports client.
- share_consumer/: the share queues' consumer (ShareFetch v2). Imports
  client, protocol.

tests/test_import_graph.py enforces these arrows.
"""
