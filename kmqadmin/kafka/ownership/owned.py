"""What a partition owner owns: the topic it reads in its slot, and the
partitions it is assigned."""

import os
import socket
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


def process_slot() -> str:
    """A name no other process has: hosts that restart an owner under the
    same name (a Celery worker's node name) pass that instead."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


@dataclass(frozen=True, slots=True)
class Owned:
    """What an owner reads, how it joins the group, and the slot it owns in.

    ``slot`` names this owner among the group's: its transactional id is
    built from it, so a restarted owner with the same slot aborts the
    transaction its predecessor left open at once, where one with a new slot
    leaves it to the transaction timeout.
    """

    bootstrap_servers: str
    topic: str
    group_id: str
    kafka_config: Mapping[str, Any]
    slot: str = field(default_factory=process_slot)

    @property
    def transactional_id(self) -> str:
        return f"kmq-{self.group_id}-{self.slot}"

    def transactional_ids(self, lanes: int) -> list[str]:
        """One per producer of an owner with ``lanes`` of them
        (owner_producer.py): the first is the slot's, the others add
        ``#<lane>`` (slots are host and worker names, which hold no ``#``)."""
        return [self.transactional_id, *(f"{self.transactional_id}#{i}" for i in range(1, lanes))]


@dataclass(eq=False, kw_only=True)
class OwnedPartition:
    """One assigned partition: how far it is read, and whether it may act."""

    partition: int
    catch_up_to: int  # one past the barrier written at assignment
    next_offset: int = 0  # next offset to read

    @property
    def caught_up(self) -> bool:
        """Whether every record present at assignment has been read: until
        then what would cancel an action (an end marker, a schedule's newer
        version) may still be ahead, so nothing acts (kmq issue #158)."""
        return self.next_offset >= self.catch_up_to
