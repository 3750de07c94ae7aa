"""The queue page's forms: an action on one delivery (ack, retry, extend,
reject) and a replay of a range of the queue's records."""

from datetime import datetime

from django import forms

from kmqadmin.console.services.coordinates import MAX_OFFSET, MAX_PARTITION
from kmqadmin.kafka.client.clock import epoch_ms


class ActionForm(forms.Form):
    """ack / retry / extend / reject from the queue page."""

    message_id = forms.CharField(max_length=1000)
    # The row's own copy: the action lands on it or on nothing (a 409).
    partition = forms.IntegerField(min_value=0, max_value=MAX_PARTITION)
    offset = forms.IntegerField(min_value=0, max_value=MAX_OFFSET)
    ms = forms.IntegerField(min_value=1, max_value=7 * 24 * 3_600_000, required=False)
    reason = forms.CharField(max_length=500, required=False)


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


def _ms(at: datetime | None) -> int | None:
    return None if at is None else epoch_ms(at)
