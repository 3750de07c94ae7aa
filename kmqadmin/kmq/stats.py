"""Counters a tracker exposes to the console and the API."""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TrackerStats:
    in_flight: int
    redelivered: int
    dead_lettered: int
    # End markers that closed an open delivery, as this tracker read them; a
    # partition rebuilt or taken over is read again, and its acks counted again.
    acked: int
    skipped: int  # due but gone from the queue topic, and marker records that are not markers
    undecodable: int  # dead-lettered because their headers do not decode
    markers_lag: int
    partitions: tuple[int, ...]
    rebalances: int  # assignments this tracker received
