"""MarkersPartition: a markers partition the tracker owns, and its commit points.

A redelivery transaction takes due messages out of the open set and commits
the partition's commit point (the oldest open start marker, with the newest
closed offsets as metadata) with their copies. It commits behind the
tracker's loop (owner_producer.py's ``transact_behind``), so the next turn
may take from the same partition while it is undecided. A commit point
computed after that turn took its due would skip the start markers of what
the undecided one took, and if that one is aborted its messages would be
lost to a restart. So a transaction sends the partition's own commit point
only when no other that took from it is undecided or aborted; else the
last one committed, which holds them all (markers are only appended, so an
older commit point stays a correct, if slower, place to read again from).
"""

from dataclasses import dataclass

from confluent_kafka import TopicPartition

from kmqadmin.kafka.ownership.owned import OwnedPartition

from .tracked_partition import TrackedPartition


@dataclass(eq=False, kw_only=True)
class MarkersPartition(TrackedPartition, OwnedPartition):
    """What the markers say, and what of it is committed."""

    committed: TopicPartition  # the commit point last committed
    committing: int = 0  # transactions that took from it, not decided yet
    failed: bool = False  # one was aborted: its open set is wrong until read again

    def safe_point(self, markers_topic: str) -> TopicPartition:
        """The commit point a transaction sends now (module docstring)."""
        if self.committing or self.failed:
            return self.committed
        return self.commit_point(markers_topic)
