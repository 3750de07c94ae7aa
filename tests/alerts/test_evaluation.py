"""Alert rules checked as beat checks them, on a real broker and tracker,
told to a real HTTP receiver and Django's email backend."""

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from kmqadmin.console.models import AlertEvent, AlertRule, Cluster, Queue, QueueMinute
from kmqadmin.console.services import secrets_at_rest
from kmqadmin.console.services.alerts import changes, notifications
from kmqadmin.console.services.alerts.evaluation import TELLING_S, check_all
from kmqadmin.console.services.clusters import clients
from kmqadmin.console.services.queues import letters
from kmqadmin.kafka.embedded.broker import free_port
from kmqadmin.kmq import QueueClient, RedeliveryTracker
from kmqadmin.workers.counts import CountPublisher
from tests.alerts.receiver import receiver
from tests.process import wait_for
from tests.queue_helpers import poll_until, send
from tests.users import user_with

pytestmark = pytest.mark.django_db

SECRET = "hook-secret"


def _rule(queue: Queue, url: str, **given: object) -> AlertRule:
    fields = {
        "condition": "dead_letters",
        "threshold": 0,
        "window_minutes": 10,
        "webhook_secret": secrets_at_rest.encrypt(SECRET),
        **given,
    }
    return AlertRule.objects.create(queue=queue, webhook_url=url, **fields)


def _dead_letter(queue: Queue, count: int) -> None:
    """``count`` messages rejected by a worker, moved to the DLQ by a real
    tracker, and counted into the database as a worker counts them."""
    config = queue.config()
    tracker = RedeliveryTracker(config)
    tracker.start()
    try:
        send(config, count)
        with QueueClient(config) as worker:
            for message in poll_until(worker, count):
                worker.reject(message, "poison")
        wait_for(lambda: tracker.stats().dead_lettered == count, 30, "the letters moved")
        CountPublisher().publish({"t": tracker})
    finally:
        tracker.stop()


def test_a_dlq_that_fills_and_is_redriven_is_told_once_firing_and_once_resolved(
    registered: Queue,
) -> None:
    with receiver() as hook:
        rule = _rule(registered, hook.url, emails="oncall@example.com\n")
        _dead_letter(registered, 3)
        now = timezone.now()
        assert check_all(now)["fired"] == 1
        assert check_all(now + timedelta(minutes=1))["fired"] == 0  # still firing: not told again

        operator, dlq = user_with("operator"), clients.dead_letters(registered.config())
        found = [m for p in range(3) for m in dlq.page(p, 10).letters]
        assert len(found) == 3
        for letter in found:
            letters.redrive(operator, registered, letter.partition(), letter.offset())
        later = now + timedelta(minutes=rule.window_minutes + 1)
        assert check_all(later)["resolved"] == 1
        assert check_all(later + timedelta(minutes=1))["resolved"] == 0

    firing, resolved = [r.json() for r in hook.received]
    assert (firing["alert"], firing["value"], firing["threshold"]) == ("firing", 3, 0)
    assert (resolved["alert"], resolved["value"]) == ("resolved", 0)
    assert firing["target"] == resolved["target"] == registered.topic
    for got in hook.received:
        assert got.headers["X-Kmq-Signature"] == notifications.signature(SECRET, got.body)
    assert [m.to for m in mail.outbox] == [["oncall@example.com"]] * 2
    assert "[FIRING]" in mail.outbox[0].subject and "[resolved]" in mail.outbox[1].subject
    events = list(AlertEvent.objects.order_by("id").values_list("kind", "told", "attempts"))
    assert events == [("firing", "sent", 1), ("resolved", "sent", 1)]


def test_a_receiver_answering_500_twice_gets_the_alert_on_the_third_try(
    registered: Queue,
) -> None:
    with receiver([500, 503]) as hook:
        rule = _rule(registered, hook.url, slack=True)
        QueueMinute.objects.create(queue=registered, minute=timezone.now(), dead_lettered=2)
        assert check_all()["fired"] == 1
    assert len(hook.received) == 3
    assert {r.body for r in hook.received} == {hook.received[0].body}
    assert "FIRING" in hook.received[0].json()["text"]  # Slack's body
    event = AlertEvent.objects.get(rule=rule)
    assert (event.told, event.attempts, event.error) == ("sent", 3, "")
    rule.refresh_from_db()
    assert rule.delivery_error == ""


@pytest.mark.parametrize("answer", ["unreachable", 404, 302])
def test_a_webhook_that_cannot_be_told_is_shown_on_the_rule_and_told_once_it_can(
    registered: Queue, answer
) -> None:
    with receiver([answer] if answer != "unreachable" else []) as hook:
        path = "/services/T0/B0/secret-token"
        url = (
            f"http://127.0.0.1:{free_port()}{path}" if answer == "unreachable" else hook.url + path
        )
        rule = _rule(registered, url)
        QueueMinute.objects.create(queue=registered, minute=timezone.now(), dead_lettered=1)
        assert check_all()["fired"] == 1
        rule.refresh_from_db()
        expected = "could not be reached" if answer == "unreachable" else f"answered {answer}"
        assert rule.firing and expected in rule.delivery_error
        assert "secret-token" not in rule.delivery_error  # the host only
        event = AlertEvent.objects.get(rule=rule)
        assert event.told == "failed" and expected in event.error

        AlertRule.objects.filter(pk=rule.pk).update(webhook_url=hook.url)  # fixed
        assert check_all()["fired"] == 0  # the same alert, told now: no second event
    event.refresh_from_db()
    assert (event.told, event.error) == ("sent", "")
    told = [r.json() for r in hook.received if r.body]
    assert [t["alert"] for t in told][-1] == "firing"
    rule.refresh_from_db()
    assert rule.delivery_error == ""


def test_a_silenced_rule_records_its_alerts_and_tells_one_still_on_when_the_silence_ends(
    registered: Queue,
) -> None:
    now = timezone.now()
    with receiver() as hook:
        rule = _rule(registered, hook.url, silenced_until=now + timedelta(minutes=30))
        QueueMinute.objects.create(queue=registered, minute=now, dead_lettered=1)
        assert check_all(now)["fired"] == 1
        assert check_all(now + timedelta(minutes=1))["fired"] == 0
        assert hook.received == []
        assert AlertEvent.objects.get(rule=rule).told == "silenced"
        QueueMinute.objects.create(
            queue=registered, minute=now + timedelta(minutes=31), dead_lettered=1
        )
        check_all(now + timedelta(minutes=31))  # silence over, alert still on
        check_all(now + timedelta(minutes=32))
    assert [r.json()["alert"] for r in hook.received] == ["firing"]
    assert AlertEvent.objects.get(rule=rule).told == "sent"


def test_a_check_older_than_the_last_changes_nothing(registered: Queue) -> None:
    now = timezone.now()
    rule = _rule(registered, "", webhook_secret=b"")
    QueueMinute.objects.create(queue=registered, minute=now, dead_lettered=1)
    assert check_all(now)["fired"] == 1
    assert check_all(now - timedelta(minutes=20))["resolved"] == 0  # a late run, an old window
    rule.refresh_from_db()
    assert rule.firing and rule.checked_at == now


def test_a_source_that_does_not_answer_leaves_the_alert_as_it_was(registered: Queue) -> None:
    away = Cluster.objects.create(name="away", bootstrap_servers=f"127.0.0.1:{free_port()}")
    queue = Queue.objects.create(cluster=away, topic=registered.topic, group_id="g")
    rule = AlertRule.objects.create(queue=queue, condition="group_lag", threshold=0, firing=True)
    assert check_all()["unmeasurable"] == 1
    rule.refresh_from_db()
    assert rule.firing and "Kafka did not answer" in rule.check_error
    assert not AlertEvent.objects.exists()


def test_lag_and_workers_are_read_from_the_groups(registered: Queue) -> None:
    """The queue's group lag, the tracker's markers lag, and its members
    given no partition, as the groups page shows them."""
    config = registered.config()
    send(config, 4)
    with QueueClient(config) as worker:
        poll_until(worker, 1)
    lag = AlertRule.objects.create(queue=registered, condition="group_lag", threshold=0)
    idle = AlertRule.objects.create(queue=registered, condition="idle_workers", threshold=0)
    oldest = AlertRule.objects.create(queue=registered, condition="oldest_in_flight", threshold=0)
    check_all()
    for rule in (lag, idle, oldest):
        rule.refresh_from_db()
        assert rule.check_error == "" and rule.value is not None, rule.check_error
    assert idle.value == 0


def test_an_alert_that_ended_unheard_is_not_told_as_resolved_later(registered: Queue) -> None:
    """Fired and resolved with no receiver: a webhook added afterwards hears
    neither, rather than a lone "resolved"."""
    now = timezone.now()
    rule = _rule(registered, "")
    QueueMinute.objects.create(queue=registered, minute=now, dead_lettered=1)
    assert check_all(now)["fired"] == 1
    assert check_all(now + timedelta(minutes=12))["resolved"] == 1
    with receiver() as hook:
        AlertRule.objects.filter(pk=rule.pk).update(webhook_url=hook.url)
        check_all(now + timedelta(minutes=13))
    assert hook.received == []
    assert list(AlertEvent.objects.values_list("told", flat=True)) == ["nobody", "nobody"]


def test_a_new_condition_on_a_firing_rule_ends_its_alert_told_by_the_next_check(
    registered: Queue,
) -> None:
    now = timezone.now()
    with receiver() as hook:
        rule = _rule(registered, hook.url)
        QueueMinute.objects.create(queue=registered, minute=now, dead_lettered=1)
        assert check_all(now)["fired"] == 1
        changes.change(user_with("admin"), rule, {"condition": "redeliveries", "threshold": 50})
        check_all(now + timedelta(minutes=1))
        check_all(now + timedelta(minutes=2))
    assert [r.json()["alert"] for r in hook.received] == ["firing", "resolved"]
    rule.refresh_from_db()
    assert not rule.firing and rule.condition == "redeliveries"


def test_workers_all_stopped_are_no_idle_worker(registered: Queue) -> None:
    config = registered.config()
    tracker = RedeliveryTracker(config)
    tracker.start()
    wait_for(lambda: tracker.stats().partitions, 30, "the tracker's partitions")
    tracker.stop()  # the group stays, Empty, with its offsets
    rule = AlertRule.objects.create(queue=registered, condition="idle_workers", threshold=0)
    assert check_all()["unmeasurable"] == 0
    rule.refresh_from_db()
    assert (rule.value, rule.check_error) == (0, "")


def test_a_failed_webhook_is_told_again_and_the_email_that_got_it_is_not(
    registered: Queue,
) -> None:
    now = timezone.now()
    with receiver([500] * 4) as hook:  # every try of the first telling fails
        _rule(registered, hook.url, emails="oncall@example.com")
        QueueMinute.objects.create(queue=registered, minute=now, dead_lettered=1)
        assert check_all(now)["fired"] == 1
        assert len(hook.received) == 4 and len(mail.outbox) == 1
        check_all(now + timedelta(minutes=1))  # the webhook answers now
        check_all(now + timedelta(minutes=2))  # told: nothing more
    assert len(hook.received) == 5 and len(mail.outbox) == 1
    event = AlertEvent.objects.get()
    assert (event.told, event.webhook_sent, event.email_sent, event.attempts) == (
        "sent",
        True,
        True,
        5,
    )


def test_an_alert_a_dead_worker_was_telling_is_told_once_its_claim_is_stale(
    registered: Queue,
) -> None:
    """The worker that recorded the change died before telling it: the event
    stays "pending"; a check within TELLING_S leaves it to that worker, a
    later one tells it."""
    now = timezone.now()
    with receiver() as hook:
        rule = _rule(registered, hook.url, firing=True, checked_at=now)
        QueueMinute.objects.create(queue=registered, minute=now, dead_lettered=1)
        event = AlertEvent.objects.create(
            rule=rule, at=now, kind="firing", value=1, threshold=0, told="pending", told_at=now
        )
        check_all(now + timedelta(seconds=TELLING_S - 10))
        assert hook.received == []
        check_all(now + timedelta(seconds=TELLING_S + 10))
        check_all(now + timedelta(seconds=TELLING_S + 70))
    assert [r.json()["alert"] for r in hook.received] == ["firing"]
    event.refresh_from_db()
    assert event.told == "sent"
