"""Counters a tracker exposes to the console and the API."""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TrackerStats:
    """A redelivery or dead letter is counted once its transaction's commit
    is collected, at the top of the tracker's next turn: a reader may see the
    copy a moment before the count."""

    in_flight: int
    acked: int  # end markers that closed an open delivery (again if re-read after a restart)
    redelivered: int
    dead_lettered: int
    skipped: int  # due but gone from the queue topic, and marker records that are not markers
    undecodable: int  # dead-lettered because their headers do not decode
    markers_lag: int
    partitions: tuple[int, ...]
    rebalances: int  # assignments this tracker received
