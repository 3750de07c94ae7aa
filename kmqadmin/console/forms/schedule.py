"""A schedule version as a person writes or edits it on the schedules page."""

import contextlib
from datetime import UTC, datetime

from confluent_kafka import Message as KafkaMessage
from django import forms

from kmqadmin.console.validators import given_text, topic_name
from kmqadmin.kafka.client.clock import epoch_ms
from kmqadmin.scheduler import wire


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
