"""The form that moves a share group's start offset (admins only)."""

from django import forms

from kmqadmin.kafka.clock import epoch_ms
from kmqadmin.kafka.share_groups import Position


class ShareResetForm(forms.Form):
    """Earliest, latest, or the first record at or after a time (UTC)."""

    to = forms.ChoiceField(
        choices=[("earliest", "earliest"), ("latest", "latest"), ("time", "a time")]
    )
    at = forms.DateTimeField(required=False, help_text="for a time: UTC, e.g. 2026-11-22 10:00")

    def clean(self) -> dict:
        data = super().clean()
        if data.get("to") == "time" and data.get("at") is None:
            raise forms.ValidationError("resetting to a time needs the time")
        if data.get("at") is not None and epoch_ms(data["at"]) < 0:
            raise forms.ValidationError("the time must be after 1970")
        return data

    def position(self) -> Position:
        data = self.cleaned_data
        return epoch_ms(data["at"]) if data["to"] == "time" else data["to"]
