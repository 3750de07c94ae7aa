"""Moving an empty group's offsets, in two steps: a plan (what each
partition's offset is and would become), then the move of exactly the
planned offsets, checked again against the group and the logs.

The plan is a dry run an admin reads before confirming; the move refuses
a group that gained members since, and an offset outside its partition's
log, so what is applied is what was shown or nothing. Both kinds of group
go through here (consumer groups commit offsets, share groups set start
offsets), so the queue page's reset and the group page's are one reset.
"""

from dataclasses import dataclass, field
from typing import Literal

from kmqadmin.kafka.admin.groups import (
    GroupAdmin,
    GroupNotEmpty,
    GroupNotFound,
    Partition,
    UnknownTopic,
    not_empty,
)
from kmqadmin.kafka.admin.log_offsets import LogOffsets

Mode = Literal["earliest", "latest", "time", "offset"]
MODES: tuple[Mode, ...] = ("earliest", "latest", "time", "offset")


class BadReset(ValueError):
    """The reset asks for what the cluster does not have: a topic, a
    partition, or an offset outside its partition's log."""


class OffsetOutOfRange(BadReset):
    """An offset asked for lies outside its partition's log."""


@dataclass(frozen=True)
class ResetTarget:
    """Where to move: ``value`` is the time (epoch ms) for ``time`` and the
    offset for ``offset``. ``topic`` / ``partition`` narrow the reset to one
    topic or one partition; without them it covers every partition the
    group has a position on."""

    mode: Mode
    value: int | None = None
    topic: str | None = None
    partition: int | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"reset to one of {', '.join(MODES)}, not {self.mode!r}")
        needs_value = self.mode in ("time", "offset")
        if needs_value and (type(self.value) is not int or self.value < 0):
            raise ValueError(f"a reset to {self.mode} needs a value ≥ 0, not {self.value!r}")
        if self.partition is not None and self.topic is None:
            raise ValueError("a partition needs its topic")

    def described(self) -> dict:
        """As JSON for the audit trail."""
        return {k: v for k, v in vars(self).items() if v is not None}


@dataclass(frozen=True)
class PlannedMove:
    partition: Partition
    current: int | None
    new: int


@dataclass(frozen=True)
class ResetPlan:
    group_id: str
    moves: tuple[PlannedMove, ...]

    @property
    def offsets(self) -> dict[Partition, int]:
        return {m.partition: m.new for m in self.moves}


@dataclass(frozen=True)
class ResetResult:
    """The offsets asked for, and the partitions the broker refused with
    why (the others moved)."""

    offsets: dict[Partition, int]
    errors: dict[Partition, str] = field(default_factory=dict)


def plan(
    admin: GroupAdmin, logs: LogOffsets, group_id: str, target: ResetTarget, *, create: bool = False
) -> ResetPlan:
    """The dry run: GroupNotEmpty while members are connected, GroupNotFound
    for no such group (unless ``create``: the move makes it, empty), BadReset
    when the scope holds no partition or an offset outside a log."""
    _refuse_members(admin, group_id, create)
    current = admin.positions(group_id)
    partitions = _scope(logs, current, target)
    new = _resolve(logs, partitions, target)
    moves = tuple(PlannedMove(p, current.get(p), new[p]) for p in partitions)
    return ResetPlan(group_id, moves)


def apply(
    admin: GroupAdmin,
    logs: LogOffsets,
    group_id: str,
    offsets: dict[Partition, int],
    *,
    create: bool = False,
) -> ResetResult:
    """Moves exactly ``offsets`` (a confirmed plan's): refused as the plan
    is when members joined or a log no longer holds an offset."""
    if not offsets:
        raise BadReset("nothing to reset: no partition given")
    _refuse_members(admin, group_id, create)
    _check_within(logs, offsets)
    return ResetResult(dict(offsets), admin.move(group_id, offsets))


def _refuse_members(admin: GroupAdmin, group_id: str, create: bool) -> None:
    try:
        group = admin.group(group_id)
    except GroupNotFound:
        if create:
            return
        raise
    if group.members:
        raise GroupNotEmpty(not_empty(group_id, len(group.members)))


def _scope(
    logs: LogOffsets, current: dict[Partition, int | None], target: ResetTarget
) -> list[Partition]:
    topics = sorted({t for t, _ in current}) if target.topic is None else [target.topic]
    partitions = [p for topic in topics for p in _partitions(logs, topic)]
    if target.partition is not None:
        partitions = [p for p in partitions if p[1] == target.partition]
        if not partitions:
            raise BadReset(f"topic {target.topic} has no partition {target.partition}")
    if not partitions:
        raise BadReset("the group has no offsets to reset: name the topic to reset it on")
    return partitions


def _partitions(logs: LogOffsets, topic: str) -> list[Partition]:
    try:
        return logs.partitions(topic)
    except UnknownTopic as exc:
        raise BadReset(str(exc)) from None


def _resolve(logs: LogOffsets, partitions: list[Partition], target: ResetTarget) -> dict:
    if target.mode == "earliest":
        return logs.earliest(partitions)
    if target.mode == "latest":
        return logs.latest(partitions)
    assert target.value is not None
    if target.mode == "time":
        return logs.at_time(partitions, target.value)
    offsets = dict.fromkeys(partitions, target.value)
    _check_within(logs, offsets)
    return offsets


def _check_within(logs: LogOffsets, offsets: dict[Partition, int]) -> None:
    known = {p for topic in {t for t, _ in offsets} for p in _partitions(logs, topic)}
    if missing := sorted(set(offsets) - known):
        raise BadReset(f"no such partitions: {', '.join(f'{t}:{p}' for t, p in missing)}")
    low, high = logs.earliest(offsets), logs.latest(offsets)
    outside = [
        f"{t}:{p} offset {o} is outside its log [{low[t, p]}, {high[t, p]}]"
        for (t, p), o in sorted(offsets.items())
        if not low[t, p] <= o <= high[t, p]
    ]
    if outside:
        raise OffsetOutOfRange("; ".join(outside))
