"""A share-group consumer over the Kafka protocol (KIP-932, ShareFetch v2).

librdkafka speaks ShareFetch v1 only, which a broker answers with
batch-optimized acquisition: a member acquires whole producer batches, far
more than it asked for, and every record acquired but not worked burns a
delivery attempt. ShareFetch v2 (Apache Kafka 4.3+) adds record-limit
acquisition (KIP-1206) and RENEW acknowledgements (KIP-1222), so this
consumer acquires exactly what its caller asked for and can keep a lock
alive. Modules: ``membership`` (ShareGroupHeartbeat), ``sessions`` (share
sessions per leader), ``requests`` (ShareFetch, ShareAcknowledge),
``leases`` (what is acquired until when), ``held`` (each delivery held and
its lease), ``acknowledgements`` (queued, and refused), ``batches`` (record
batches to Messages), ``errors``, ``consumer`` (the API).

May import kmqadmin.kafka.client and kmqadmin.kafka.protocol.
"""
