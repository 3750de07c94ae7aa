"""Consumer groups (classic and KIP-848) through confluent-kafka's
AdminClient: the listing, a group's members and committed offsets, and the
commit of new offsets for the reset (kafka.offset_reset). Every call is
bounded by ``timeout_s``; a broker error is a GroupError, never a hang."""

from collections.abc import Callable, Mapping
from typing import Any

from confluent_kafka import (
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    ConsumerGroupType,
    KafkaError,
    KafkaException,
    TopicPartition,
)

from .groups import (
    Group,
    GroupError,
    GroupListing,
    GroupNotEmpty,
    GroupNotFound,
    Kind,
    Member,
    Partition,
    not_empty,
)
from .log_offsets import LogOffsets
from .topics import admin_client

# Share (and streams) groups answer ListGroups too: only these are consumer groups.
_CONSUMER_TYPES = {ConsumerGroupType.CLASSIC, ConsumerGroupType.CONSUMER}
# An id the broker refuses (a NUL, say) names no group either.
_NO_SUCH_GROUP = {KafkaError.GROUP_ID_NOT_FOUND, KafkaError.INVALID_GROUP_ID}
_MEMBERS_PRESENT = {KafkaError.UNKNOWN_MEMBER_ID, KafkaError.REBALANCE_IN_PROGRESS}


class ConsumerGroupAdmin:
    """Consumer-group admin for one cluster; a GroupAdmin (kafka.groups)."""

    kind: Kind = "consumer"

    def __init__(
        self,
        bootstrap_servers: str,
        kafka_config: Mapping[str, Any] | None = None,
        timeout_s: float = 5.0,
    ) -> None:
        self.timeout_s = timeout_s
        self._admin = admin_client(bootstrap_servers, kafka_config)
        self.logs = LogOffsets(self._admin, timeout_s)

    def list_groups(self) -> list[GroupListing]:
        found = self._call(
            lambda: self._admin.list_consumer_groups(
                types=_CONSUMER_TYPES, request_timeout=self.timeout_s
            ),
            "listing consumer groups",
        )
        groups = [
            GroupListing(g.group_id, "consumer", _name(g.state), _name(g.type)) for g in found.valid
        ]
        return sorted(groups, key=lambda g: g.group_id)

    def group(self, group_id: str) -> Group:
        futures = self._admin.describe_consumer_groups([group_id], request_timeout=self.timeout_s)
        try:
            described = futures[group_id].result(self.timeout_s)
        except KafkaException as exc:
            if exc.args[0].code() in _NO_SUCH_GROUP:
                raise GroupNotFound(f"no consumer group {group_id}") from None
            raise GroupError(f"describing consumer group {group_id}: {exc}") from None
        except TimeoutError as exc:
            raise GroupError(f"describing consumer group {group_id}: {exc}") from None
        if described.state == ConsumerGroupState.DEAD:
            raise GroupNotFound(f"no consumer group {group_id}")
        members = tuple(_member(m) for m in described.members)
        return Group(group_id, "consumer", _name(described.state), _name(described.type), members)

    def positions(self, group_id: str) -> dict[Partition, int | None]:
        """The committed offset of every partition the group committed on."""
        asked = [ConsumerGroupTopicPartitions(group_id)]
        futures = self._admin.list_consumer_group_offsets(asked, request_timeout=self.timeout_s)
        found = self._call(lambda: futures[group_id], f"offsets of {group_id}")
        return {
            (tp.topic, tp.partition): tp.offset if tp.offset >= 0 else None
            for tp in found.topic_partitions
        }

    def move(self, group_id: str, offsets: dict[Partition, int]) -> dict[Partition, str]:
        """Commits the offsets; GroupNotEmpty when the broker says members
        are there (one joined since the check: it answers per partition)."""
        wanted = [TopicPartition(t, p, o) for (t, p), o in offsets.items()]
        asked = [ConsumerGroupTopicPartitions(group_id, wanted)]
        try:
            future = self._admin.alter_consumer_group_offsets(
                asked, request_timeout=self.timeout_s
            )[group_id]
            done = future.result(self.timeout_s)
        except KafkaException as exc:
            if exc.args[0].code() in _MEMBERS_PRESENT:
                raise GroupNotEmpty(not_empty(group_id, None)) from None
            raise GroupError(f"committing offsets of {group_id}: {exc}") from None
        except TimeoutError as exc:
            raise GroupError(f"committing offsets of {group_id}: {exc}") from None
        refused = [tp for tp in done.topic_partitions if tp.error]
        if any(tp.error.code() in _MEMBERS_PRESENT for tp in refused):
            raise GroupNotEmpty(not_empty(group_id, None))
        return {(tp.topic, tp.partition): tp.error.str() for tp in refused}

    def _call(self, start: Callable[[], Any], doing: str) -> Any:
        try:
            return start().result(self.timeout_s)
        except (KafkaException, TimeoutError) as exc:
            raise GroupError(f"{doing}: {exc}") from None


def _name(value: Any) -> str:
    """An enum of confluent-kafka's as the broker spells it (Stable, classic)."""
    return getattr(value, "name", str(value)).replace("_", " ").capitalize()


def _member(m: Any) -> Member:
    assigned = sorted((tp.topic, tp.partition) for tp in m.assignment.topic_partitions)
    return Member(m.member_id, m.client_id, m.host.lstrip("/"), tuple(assigned))
