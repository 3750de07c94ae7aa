"""Cluster administration and reads of offsets and groups: topics, consumer
and share groups (groups, consumer_groups, share_groups), the two-step offset
reset, log offsets, and the bounded reads of records by offset
(offset_reader, stretch, record_count, caught_up, message_size).

May import kmqadmin.kafka.client and kmqadmin.kafka.protocol (share-group
calls over the Kafka protocol); nothing above them.
"""
