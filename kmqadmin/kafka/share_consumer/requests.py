"""The two requests a member sends a leader: ShareFetch (acquire records)
and ShareAcknowledge (settle or renew them), each at its share session's
epoch.

A fetch lists only the partitions its session does not hold yet, and
forgets those it no longer wants; acquisition is record-limited
(ShareAcquireMode 1), so the broker acquires no more than asked for.
"""

import uuid

from kmqadmin.kafka.protocol import ShareAcknowledgeRequest, ShareFetchRequest
from kmqadmin.kafka.share_consumer.acknowledgements import Entry
from kmqadmin.kafka.share_consumer.leases import batches
from kmqadmin.kafka.share_consumer.membership import Membership
from kmqadmin.kafka.share_consumer.sessions import Session

RECORD_LIMIT = 1  # ShareAcquireMode: acquire no more than MaxRecords
MAX_BYTES = 8 * 1024 * 1024


def fetch_request(
    membership: Membership,
    session: Session,
    topic_id: uuid.UUID | None,
    partitions: set[int],
    max_records: int,
    wait_ms: int,
) -> ShareFetchRequest:
    R = ShareFetchRequest
    added = partitions if not session.open else partitions - session.partitions
    forgotten = session.partitions - partitions if session.open else set()
    return R(
        group_id=membership.group_id,
        member_id=membership.member_id,
        share_session_epoch=session.epoch,
        max_wait_ms=wait_ms,
        min_bytes=1,
        max_bytes=MAX_BYTES,
        max_records=max_records,
        batch_size=max_records,
        share_acquire_mode=RECORD_LIMIT,
        topics=[
            R.FetchTopic(
                topic_id=topic_id,
                partitions=[
                    R.FetchTopic.FetchPartition(partition_index=p, acknowledgement_batches=[])
                    for p in sorted(added)
                ],
            )
        ]
        if added
        else [],
        forgotten_topics_data=[R.ForgottenTopic(topic_id=topic_id, partitions=sorted(forgotten))]
        if forgotten
        else [],
    )


def acknowledge_request(
    membership: Membership,
    session: Session,
    topic_id: uuid.UUID | None,
    entries: list[Entry],
    renew: bool,
) -> ShareAcknowledgeRequest:
    """One request for ``entries``, contiguous offsets of a partition as one
    batch; none at all (and epoch -1) closes the session."""
    R = ShareAcknowledgeRequest
    T = R.AcknowledgeTopic
    P = T.AcknowledgePartition
    by_partition: dict[int, list[tuple[int, int]]] = {}
    for partition, offset, kind, _ in entries:
        by_partition.setdefault(partition, []).append((offset, kind))
    partitions = [
        P(
            partition_index=partition,
            acknowledgement_batches=[
                P.AcknowledgementBatch(first_offset=f, last_offset=last, acknowledge_types=t)
                for f, last, t in batches(acks)
            ],
        )
        for partition, acks in by_partition.items()
    ]
    return R(
        group_id=membership.group_id,
        member_id=membership.member_id,
        share_session_epoch=session.epoch,
        is_renew_ack=renew,
        topics=[T(topic_id=topic_id, partitions=partitions)],
    )
