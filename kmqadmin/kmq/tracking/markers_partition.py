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

An undecided transaction also holds the partition's last stable offset at
its first record, so the tracker's consumer stops there: it knows the
markers up to when the oldest of them began (``held_since``, tracked
partition's ``known_until``), not only up to the last marker it read.
"""

from collections import deque
from dataclasses import dataclass, field

from confluent_kafka import TopicPartition

from kmqadmin.kafka.ownership.owned import OwnedPartition
from kmqadmin.kmq.tracking.tracked_partition import TrackedPartition


@dataclass(eq=False, kw_only=True)
class MarkersPartition(TrackedPartition, OwnedPartition):
    """What the markers say, and what of it is committed."""

    committed: TopicPartition  # the commit point last committed
    # When each transaction that took from it and is not decided yet began
    # writing (epoch ms), oldest first: outcomes are decided in that order.
    undecided: deque[int] = field(default_factory=deque)
    failed: bool = False  # one was aborted: its open set is wrong until read again

    def safe_point(self, markers_topic: str) -> TopicPartition:
        """The commit point a transaction sends now (module docstring)."""
        if self.undecided or self.failed:
            return self.committed
        return self.commit_point(markers_topic)

    def moved_point(self, markers_topic: str) -> TopicPartition | None:
        """The safe point, when its offset has moved past the one committed;
        its metadata (the closed offsets, encoded) is built only then: the
        tracker asks every partition it owns each second."""
        if self.undecided or self.failed or self.commit_offset() == self.committed.offset:
            return None
        return self.commit_point(markers_topic)

    def decided(self, committed: TopicPartition | None) -> None:
        """The oldest transaction that took from it is decided: committed
        with ``committed`` as its point, or aborted (None). The end the
        consumer last reported was where that one held it: no longer known
        to be the end (``known_until``)."""
        self.undecided.popleft()
        self.end_read = -1
        if committed is None:
            self.failed = True
        else:
            self.committed = committed

    def held_since(self) -> int | None:
        """When the oldest of those began: the markers read up to the last
        stable offset it holds are known up to then (``known_until``)."""
        return self.undecided[0] if self.undecided else None
