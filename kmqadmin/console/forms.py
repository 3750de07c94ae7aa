"""Forms of the console; the API reuses the DLQ filter so both read it alike."""

import contextlib
from datetime import UTC, datetime

from confluent_kafka import Message as KafkaMessage
from django import forms
from django.contrib.auth.base_user import AbstractBaseUser

from kmqadmin.kafka.client.clock import epoch_ms
from kmqadmin.kafka.client.security import SECRET_REFERENCES, reference_problem
from kmqadmin.kmq import LetterFilter
from kmqadmin.scheduler import wire

from .models import SCHEMA_REGISTRY_FIELDS, SECURITY_FIELDS, Cluster, Queue, ScheduleTopic
from .services.backend_switch import SwitchRefused, check_switch
from .services.coordinates import MAX_OFFSET, MAX_PARTITION
from .services.validators import given_text, topic_name


class ReferenceInput(forms.TextInput):
    """A secret's reference (env:NAME, file:PATH) is shown again; anything
    else is not, as it may be the secret itself typed in by mistake."""

    def format_value(self, value: object) -> str | None:
        if isinstance(value, str) and reference_problem(value) is not None:
            return None
        return super().format_value(value)


class ClusterForm(forms.ModelForm):
    """Also the admin's: neither renders a secret back."""

    class Meta:
        model = Cluster
        fields = ["name", "bootstrap_servers", *SECURITY_FIELDS, *SCHEMA_REGISTRY_FIELDS]
        widgets = {
            name: ReferenceInput for name in (*SECRET_REFERENCES, "schema_registry_password")
        }

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["security_protocol"].required = False  # not given: PLAINTEXT

    def clean_security_protocol(self) -> str:
        return self.cleaned_data["security_protocol"] or "PLAINTEXT"


class QueueForm(forms.ModelForm):
    """The registry's and /admin/'s. ``user`` is who saves it: a refused
    backend switch is audited as theirs."""

    user: AbstractBaseUser | None = None

    class Meta:
        model = Queue
        fields = [
            "cluster",
            "topic",
            "group_id",
            "backend",
            "partitions",
            "message_timeout_ms",
            "max_redeliveries",
            "markers_topic_override",
            "dlq_topic_override",
            "backoff_initial_ms",
            "backoff_multiplier",
            "backoff_max_ms",
            "mask_json_paths",
            "mask_headers",
            "mask_patterns",
            "mask_operators",
        ]

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["backend"].required = False  # not given: unchanged (kmq when new)

    def clean_backend(self) -> str:
        """Not switched while messages are in flight (the instance still
        holds the saved backend here: the form copies onto it after)."""
        backend = self.cleaned_data["backend"] or self.instance.backend
        if self.instance.pk is not None:
            try:
                check_switch(self.user, self.instance, backend)
            except SwitchRefused as exc:
                raise forms.ValidationError(str(exc), code="in_flight") from None
        return backend


class TopicListField(forms.CharField):
    """Topic names, one a line (or separated by spaces or commas), as a list;
    the model's validator checks each name."""

    widget = forms.Textarea(attrs={"rows": 4})

    def prepare_value(self, value: object) -> object:
        return "\n".join(value) if isinstance(value, list) else value

    def to_python(self, value: str | None) -> list[str]:
        text = super().to_python(value)
        return list(dict.fromkeys(text.replace(",", " ").split()))


class ScheduleTopicForm(forms.ModelForm):
    allowed_targets = TopicListField(
        required=False,
        label="Allowed target topics",
        help_text="One a line; its schedules fire into these alone. Empty: any topic.",
    )

    class Meta:
        model = ScheduleTopic
        fields = ["cluster", "topic", "group_id", "partitions", "allowed_targets"]

    def __init__(self, *args, **kwargs) -> None:
        """A new registration proposes the registered queues as its targets."""
        super().__init__(*args, **kwargs)
        if self.instance.pk is None:
            queues = Queue.objects.order_by("topic").values_list("topic", flat=True)
            self.initial["allowed_targets"] = list(dict.fromkeys(queues))


class ActionForm(forms.Form):
    """ack / retry / extend / reject from the queue page."""

    message_id = forms.CharField(max_length=1000)
    # The row's own copy: the action lands on it or on nothing (a 409).
    partition = forms.IntegerField(min_value=0, max_value=MAX_PARTITION)
    offset = forms.IntegerField(min_value=0, max_value=MAX_OFFSET)
    ms = forms.IntegerField(min_value=1, max_value=7 * 24 * 3_600_000, required=False)
    reason = forms.CharField(max_length=500, required=False)


class LetterFilterForm(forms.Form):
    """Which DLQ letters: every field given must hold."""

    partition = forms.IntegerField(min_value=0, max_value=MAX_PARTITION, required=False)
    start = forms.IntegerField(
        min_value=0, max_value=MAX_OFFSET, required=False, label="from offset"
    )
    since = forms.DateTimeField(
        required=False,
        help_text="ISO 8601, UTC unless it says",
        error_messages={"invalid": "expected ISO 8601, e.g. 2026-11-22T10:00:00Z"},
    )
    until = forms.DateTimeField(
        required=False,
        help_text="before this time",
        error_messages={"invalid": "expected ISO 8601, e.g. 2026-11-22T11:00:00Z"},
    )
    key = forms.CharField(required=False, help_text="key contains")
    reason = forms.CharField(required=False, help_text="kmq-dlq-reason is")
    header = forms.RegexField(
        r"^[^=]+=",
        required=False,
        help_text="NAME=VALUE",
        error_messages={"invalid": "expected NAME=VALUE"},
    )
    contains = forms.CharField(required=False, help_text="payload contains")

    def letter_filter(self) -> LetterFilter:
        data = self.cleaned_data
        header = None
        if data["header"]:
            name, _, value = data["header"].partition("=")
            header = (name, value.encode())
        return LetterFilter(
            key=_given(data["key"]),
            reason=_given(data["reason"]),
            header=header,
            contains=_given(data["contains"]),
            since_ms=_ms(data["since"]),
            until_ms=_ms(data["until"]),
        )


class ScheduleForm(forms.Form):
    """A schedule version; the id only when creating one."""

    id = forms.CharField(max_length=1000, validators=[given_text])
    at = forms.DateTimeField(help_text="UTC, e.g. 2026-11-22 10:00:00")
    target_topic = forms.CharField(validators=[topic_name])
    key = forms.CharField(required=False, validators=[given_text])
    value = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), required=False, strip=False)

    def clean_at(self) -> datetime:
        """Within the years a page can show, as the scheduler's decoder wants."""
        at = self.cleaned_data["at"]
        at = at if at.tzinfo else at.replace(tzinfo=UTC)
        try:
            wire.check_due(epoch_ms(at))
        except wire.ScheduleError as exc:
            raise forms.ValidationError(str(exc)) from None
        return at

    def schedule(self) -> dict:
        """What services.schedules.write_schedule takes."""
        data = self.cleaned_data
        return {
            "at": data["at"],
            "target_topic": data["target_topic"],
            "payload": data["value"].encode(),
            "key": data["key"] or None,
            "headers": {},
        }

    @staticmethod
    def initial_from(record: KafkaMessage | None) -> dict:
        """The form's values from a schedule's live record; the value only
        when it is text (the edit keeps a binary payload as it is)."""
        if record is None:
            return {}
        fires = wire.target(record, "")
        initial = {
            "id": record.key().decode(errors="replace"),
            "at": datetime.fromtimestamp(wire.deadline(wire.headers_of(record)) / 1000, UTC),
            "target_topic": fires.topic,
            "key": (fires.key or b"").decode(errors="replace"),
        }
        with contextlib.suppress(UnicodeDecodeError):
            initial["value"] = record.value().decode()
        return initial


class AuditFilterForm(forms.Form):
    user = forms.CharField(required=False)
    action = forms.CharField(required=False)
    target = forms.CharField(required=False, help_text="contains")
    since = forms.DateTimeField(required=False)


class ReplayForm(forms.Form):
    """Copies of a range of queue records, sent again as fresh messages."""

    partition = forms.IntegerField(
        min_value=0, max_value=MAX_PARTITION, required=False, help_text="blank: all"
    )
    from_offset = forms.IntegerField(min_value=0, max_value=MAX_OFFSET, required=False)
    to_offset = forms.IntegerField(
        min_value=0, max_value=MAX_OFFSET, required=False, help_text="exclusive"
    )
    since = forms.DateTimeField(required=False, help_text="or by time (UTC)")
    until = forms.DateTimeField(required=False)

    def clean(self) -> dict:
        data = super().clean()
        by_offset = data.get("from_offset") is not None
        by_time = data.get("since") is not None
        if by_offset == by_time:
            raise forms.ValidationError("give either a from offset or a since time")
        if by_offset and data.get("partition") is None:
            raise forms.ValidationError("an offset range needs its partition")
        return data

    def span(self) -> dict:
        """What the replay job takes (JSON, epoch ms)."""
        data = self.cleaned_data
        return {
            "partition": data["partition"],
            "start": data["from_offset"],
            "end": data["to_offset"],
            "since_ms": _ms(data["since"]),
            "until_ms": _ms(data["until"]),
        }


def _given(text: str) -> bytes | None:
    return text.encode() if text else None


def _ms(at: datetime | None) -> int | None:
    return None if at is None else epoch_ms(at)
