"""Long-running partition owners (the tracker, the scheduler): the owner's
skeleton (partition_owner), its one transactional producer fenced by the
group's generation (owner_producer, fencing), the slot it owns in (owned),
the barrier record that proves a new owner caught up (barrier), and the
start/stop/restart shape of a service (service, restart_pause).

May import kmqadmin.kafka.client only.
"""
