"""What consumer groups and share groups have in common, so one listing,
one detail page and one offset reset serve both kinds.

A group's position on a topic-partition is its committed offset (consumer
group) or its share-partition start offset (share group); either way it is
where the group would begin reading again, and what an admin may move while
no member is connected.
"""

from dataclasses import dataclass
from typing import Literal, Protocol

from kmqadmin.kafka.client.errors import KafkaSetupError

Kind = Literal["consumer", "share"]
KINDS: tuple[Kind, ...] = ("consumer", "share")
Partition = tuple[str, int]  # (topic, partition)


class GroupError(KafkaSetupError):
    """The broker refused or failed a group call; the message says why."""


class GroupNotEmpty(GroupError):
    """Offsets can only move while no consumer is in the group."""


class GroupNotFound(GroupError):
    """The cluster has no group of that kind by that id."""


class UnknownTopic(GroupError):
    """The cluster has no such topic (or it has no partitions)."""


@dataclass(frozen=True)
class Member:
    member_id: str
    client_id: str
    host: str
    assignment: tuple[Partition, ...]  # sorted


@dataclass(frozen=True)
class GroupListing:
    group_id: str
    kind: Kind
    state: str
    group_type: str  # classic / consumer (KIP-848) / share


@dataclass(frozen=True)
class Group:
    """A group as its coordinator describes it, whatever its kind."""

    group_id: str
    kind: Kind
    state: str
    group_type: str
    members: tuple[Member, ...] = ()


class GroupAdmin(Protocol):
    """One kind of group on one cluster, as the reset needs it."""

    kind: Kind
    timeout_s: float

    def group(self, group_id: str) -> Group:
        """GroupNotFound when there is no such group."""
        ...

    def positions(self, group_id: str) -> dict[Partition, int | None]:
        """Where the group stands on each partition it has a position on."""
        ...

    def move(self, group_id: str, offsets: dict[Partition, int]) -> dict[Partition, str]:
        """Sets the positions; the partitions the broker refused, with why."""
        ...


def not_empty(group_id: str, members: int | None) -> str:
    who = f"{members} consumer(s) are" if members else "consumers are"
    return (
        f"group {group_id} is not empty: {who} connected; stop them first "
        "(the broker moves a group's offsets only while no one consumes)"
    )
