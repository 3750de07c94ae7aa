"""Consumer groups (classic and KIP-848) through confluent-kafka's
AdminClient: the listing, a group's members and committed offsets, and the
commit of new offsets for the reset (kafka.admin.offset_reset). Every call is
bounded by ``timeout_s``; a broker error is a GroupError, never a hang."""

import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

from confluent_kafka import (
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    ConsumerGroupType,
    KafkaError,
    KafkaException,
    TopicPartition,
)

from kmqadmin.kafka.admin.busy_coordinator import once_it_answers
from kmqadmin.kafka.admin.groups import (
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
from kmqadmin.kafka.admin.log_offsets import LogAdmin

# Share (and streams) groups answer ListGroups too: only these are consumer groups.
_CONSUMER_TYPES = {ConsumerGroupType.CLASSIC, ConsumerGroupType.CONSUMER}
# An id the broker refuses (a NUL, say) names no group either.
_NO_SUCH_GROUP = {KafkaError.GROUP_ID_NOT_FOUND, KafkaError.INVALID_GROUP_ID}
_MEMBERS_PRESENT = {KafkaError.UNKNOWN_MEMBER_ID, KafkaError.REBALANCE_IN_PROGRESS}


class ConsumerGroupAdmin(LogAdmin):
    """Consumer-group admin for one cluster; a GroupAdmin (kafka.admin.groups)."""

    kind: Kind = "consumer"

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
        missing = GroupNotFound(f"no consumer group {group_id}")
        described = self._call(
            lambda: self._admin.describe_consumer_groups(
                [group_id], request_timeout=self.timeout_s
            )[group_id],
            f"describing consumer group {group_id}",
            dict.fromkeys(_NO_SUCH_GROUP, missing),
        )
        if described.state == ConsumerGroupState.DEAD:
            raise missing
        members = tuple(_member(m) for m in described.members)
        return Group(group_id, "consumer", _name(described.state), _name(described.type), members)

    def positions(self, group_id: str) -> dict[Partition, int | None]:
        """The committed offset of every partition the group committed on."""
        asked = [ConsumerGroupTopicPartitions(group_id)]
        found = self._call(
            lambda: self._admin.list_consumer_group_offsets(asked, request_timeout=self.timeout_s)[
                group_id
            ],
            f"offsets of {group_id}",
        )
        return {
            (tp.topic, tp.partition): tp.offset if tp.offset >= 0 else None
            for tp in found.topic_partitions
        }

    def move(self, group_id: str, offsets: dict[Partition, int]) -> dict[Partition, str]:
        """Commits the offsets; GroupNotEmpty when the broker says members
        are there (one joined since the check: it answers per partition)."""
        wanted = [TopicPartition(t, p, o) for (t, p), o in offsets.items()]
        asked = [ConsumerGroupTopicPartitions(group_id, wanted)]
        not_empty_now = GroupNotEmpty(not_empty(group_id, None))
        done = self._call(
            lambda: self._admin.alter_consumer_group_offsets(asked, request_timeout=self.timeout_s)[
                group_id
            ],
            f"committing offsets of {group_id}",
            dict.fromkeys(_MEMBERS_PRESENT, not_empty_now),
        )
        refused = [tp for tp in done.topic_partitions if tp.error]
        if any(tp.error.code() in _MEMBERS_PRESENT for tp in refused):
            raise not_empty_now
        return {(tp.topic, tp.partition): tp.error.str() for tp in refused}

    def _call(
        self,
        start: Callable[[], Future],
        doing: str,
        refusals: Mapping[int, GroupError] | None = None,
    ) -> Any:
        """The result of the call ``start`` makes, made again while the
        group's coordinator is loading or moving (a broker just started),
        until the timeout. An error code in ``refusals`` raises its
        exception, any other a GroupError saying what was being done."""
        deadline = time.monotonic() + self.timeout_s
        try:
            return once_it_answers(lambda: start().result(self.timeout_s), deadline)
        except KafkaException as exc:
            code = exc.args[0].code()
            if refusals and code in refusals:
                raise refusals[code] from None
            raise GroupError(f"{doing}: {exc}") from None
        except TimeoutError as exc:
            raise GroupError(f"{doing}: {exc}") from None


def _name(value: Any) -> str:
    """An enum of confluent-kafka's as the broker spells it (Stable, classic)."""
    return getattr(value, "name", str(value)).replace("_", " ").capitalize()


def _member(m: Any) -> Member:
    assigned = sorted((tp.topic, tp.partition) for tp in m.assignment.topic_partitions)
    return Member(m.member_id, m.client_id, m.host.lstrip("/"), tuple(assigned))
