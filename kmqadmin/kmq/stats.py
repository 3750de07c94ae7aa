"""Counters a tracker exposes to the console and the API."""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TrackerStats:
    in_flight: int
    redelivered: int
    dead_lettered: int
    skipped: int
    markers_lag: int
    partitions: tuple[int, ...]
