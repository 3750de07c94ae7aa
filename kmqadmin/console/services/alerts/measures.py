"""What a rule's condition is now, from the sources the dashboard reads: the
trackers' per-minute counts in the database (a share queue's from its counts
topic), the in-flight view, the queue's depth, the groups' offsets and
members, and the schedulers' per-minute lateness the workers write. No topic
is scanned. A figure that cannot be had is ``Unmeasurable`` with the reason: the
check says so on the rule and leaves the alert as it was ("unknown" is not
"resolved")."""

from collections import Counter
from datetime import datetime, timedelta

from django.db.models import Sum
from django.http import Http404

from kmqadmin.console.models import AlertRule, Queue, QueueMinute, ScheduleMinute
from kmqadmin.console.services.clusters import clients
from kmqadmin.console.services.clusters.availability import KafkaAway
from kmqadmin.console.services.groups import listing as groups
from kmqadmin.console.services.queues.stats import in_flight, share_depth
from kmqadmin.kmq.share.counts import MINUTE_MS
from kmqadmin.scheduler.lateness import BOUNDS_S, bucket_keys

Condition = AlertRule.Condition
CATCH_UP_S = 5.0
# A group's states (classic and KIP-848) while its members' partitions change hands.
REBALANCING = {"PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"}


class Unmeasurable(Exception):
    """The source did not answer, or has no such figure for this target."""


def measure(rule: AlertRule, now: datetime) -> float:
    try:
        return _MEASURES[rule.condition](rule, now)
    except (KafkaAway, *groups.BROKER_ERRORS) as exc:
        raise Unmeasurable(f"Kafka did not answer: {exc}") from exc


def _dead_letters(rule: AlertRule, now: datetime) -> float:
    return _counted(rule.queue, "dead", rule.window_minutes, now)


def _redeliveries(rule: AlertRule, now: datetime) -> float:
    return round(
        _counted(rule.queue, "redelivered", rule.window_minutes, now) / rule.window_minutes, 1
    )


def _counted(queue: Queue, what: str, minutes: int, now: datetime) -> int:
    """The last ``minutes`` whole minutes and this one so far, as the
    dashboard's rates count them."""
    if queue.backend == "share":
        window = clients.share_counts(queue.config()).last(
            minutes + 1, now=int(now.timestamp() * 1000) + MINUTE_MS
        )
        if not window.complete:
            raise Unmeasurable("the counts topic was not read to its end in time")
        if what == "dead":
            return sum(c.dead_lettered for c in window.minutes)
        return sum(c.released + c.delayed for c in window.minutes)
    since = now.replace(second=0, microsecond=0) - timedelta(minutes=minutes)
    field = "dead_lettered" if what == "dead" else "redelivered"
    rows = QueueMinute.objects.filter(queue=queue, minute__gte=since, minute__lte=now)
    return rows.aggregate(n=Sum(field, default=0))["n"]


def _oldest_in_flight(rule: AlertRule, now: datetime) -> float:
    """From the in-flight view once it has read every marker: a view just
    made (a worker restarted) would miss acks and see old deliveries."""
    if not clients.in_flight(rule.queue.config()).catch_up(CATCH_UP_S):
        raise Unmeasurable(f"the markers could not be read to their end in {CATCH_UP_S:g} s")
    oldest_ms = in_flight(rule.queue)["oldest_in_flight_ms"]
    return 0.0 if oldest_ms is None else round(oldest_ms / 1000, 1)


def _markers_lag(rule: AlertRule, now: datetime) -> float:
    config = rule.queue.config()
    return _group(rule, "consumer", config.tracker_group_id).total_lag


def _group_lag(rule: AlertRule, now: datetime) -> float:
    """A queue's: its records not yet taken, as the dashboard's depth counts
    them (so a queue filling with no worker at all alerts too); a schedules
    topic's: its scheduler group's lag."""
    if rule.schedules_id:
        return _group(rule, "consumer", rule.schedules.group_id).total_lag
    if rule.queue.backend == "share":
        return share_depth(rule.queue)
    return clients.gauges(rule.queue.config()).depth()


def _idle_workers(rule: AlertRule, now: datetime) -> float:
    """Members of the tracker's (or scheduler's) group given no partition:
    workers beyond the partitions' count, or one the group left out."""
    group_id = (
        rule.schedules.group_id if rule.schedules_id else rule.queue.config().tracker_group_id
    )
    try:
        group = _group(rule, "consumer", group_id).group
    except Unmeasurable:
        return 0.0  # no group: no worker at all, none idle
    if not group.members:
        return 0.0  # every worker stopped: none idle (the group keeps its offsets)
    if group.state in REBALANCING:
        raise Unmeasurable(f"group {group_id} is {group.state}: members are being given partitions")
    return float(sum(1 for m in group.members if not m.assignment))


def _lateness_p99(rule: AlertRule, now: datetime) -> float:
    """Seconds, at most, within which 99 % of the window's fires fired: the
    upper bound of the bucket the 99th percentile falls in (Prometheus's
    histogram_quantile interpolates inside it); past the last bound, that
    bound (at least that late). No fire: 0."""
    since = now.replace(second=0, microsecond=0) - timedelta(minutes=rule.window_minutes)
    rows = ScheduleMinute.objects.filter(
        schedules=rule.schedules, minute__gte=since, minute__lte=now
    )
    counts: Counter[str] = Counter()
    for row in rows:
        counts.update(row.late)
    keys = bucket_keys()  # a bound no longer used is left out
    wanted, running = 0.99 * sum(counts[key] for key in keys), 0
    for key, bound in zip(keys, (*BOUNDS_S, BOUNDS_S[-1]), strict=True):
        running += counts[key]
        if running and running >= wanted:
            return bound
    return 0.0


def _group(rule: AlertRule, kind: str, group_id: str) -> groups.GroupDetail:
    try:
        return groups.detail(rule.on.cluster, kind, group_id)
    except Http404:
        raise Unmeasurable(f"there is no {kind} group {group_id} yet") from None


_MEASURES = {
    Condition.DEAD_LETTERS: _dead_letters,
    Condition.REDELIVERIES: _redeliveries,
    Condition.OLDEST_IN_FLIGHT: _oldest_in_flight,
    Condition.MARKERS_LAG: _markers_lag,
    Condition.GROUP_LAG: _group_lag,
    Condition.IDLE_WORKERS: _idle_workers,
    Condition.LATENESS_P99: _lateness_p99,
}
