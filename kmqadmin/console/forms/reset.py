"""The forms that move a group's offsets (admins only): where to (earliest,
latest, a time, an offset), on what (the group page may narrow it to one
topic or partition), and the confirmation that carries the previewed
offsets back, so what is applied is what was shown."""

import json

from django import forms

from kmqadmin.console.services.groups.listing import named, parse_offsets
from kmqadmin.kafka.admin.groups import Partition
from kmqadmin.kafka.admin.offset_reset import MODES, ResetTarget
from kmqadmin.kafka.client import json_payload
from kmqadmin.kafka.client.clock import epoch_ms
from kmqadmin.kmq import names


class ResetForm(forms.Form):
    """Earliest, latest, the first record at or after a time (UTC), or an offset."""

    to = forms.ChoiceField(choices=[(m, "a time" if m == "time" else m) for m in MODES])
    at = forms.DateTimeField(required=False, help_text="for a time: UTC, e.g. 2026-11-22 10:00")
    offset = forms.IntegerField(required=False, min_value=0, help_text="for an offset")

    def clean(self) -> dict:
        data = super().clean()
        if data.get("to") == "time" and data.get("at") is None:
            raise forms.ValidationError("resetting to a time needs the time")
        if data.get("at") is not None and epoch_ms(data["at"]) < 0:
            raise forms.ValidationError("the time must be after 1970")
        if data.get("to") == "offset" and data.get("offset") is None:
            raise forms.ValidationError("resetting to an offset needs the offset")
        return data

    def target(self, topic: str | None = None, partition: int | None = None) -> ResetTarget:
        data = self.cleaned_data
        value = {"time": lambda: epoch_ms(data["at"]), "offset": lambda: data["offset"]}
        mode = data["to"]
        return ResetTarget(mode, value[mode]() if mode in value else None, topic, partition)


class GroupResetForm(ResetForm):
    """On a group's page: every partition it has a position on, or one
    topic, or one partition of it."""

    topic = forms.CharField(required=False, help_text="blank: every topic of the group")
    partition = forms.IntegerField(required=False, min_value=0, help_text="blank: all")

    def clean(self) -> dict:
        data = super().clean()
        if data.get("topic"):
            try:
                names.check_topic(data["topic"])
            except ValueError as exc:
                raise forms.ValidationError(f"topic: {exc}") from None
        if data.get("partition") is not None and not data.get("topic"):
            raise forms.ValidationError("a partition needs its topic")
        return data

    def group_target(self) -> ResetTarget:
        return self.target(self.cleaned_data["topic"] or None, self.cleaned_data["partition"])


class ConfirmResetForm(GroupResetForm):
    """The previewed offsets, as JSON {"topic:partition": offset}."""

    offsets = forms.CharField(widget=forms.HiddenInput)

    def clean_offsets(self) -> dict[Partition, int]:
        try:
            return parse_offsets(json_payload.loads(self.cleaned_data["offsets"]))
        except ValueError as exc:  # JSON's errors are ValueErrors too
            raise forms.ValidationError(f"offsets: {exc}") from None


def offsets_json(offsets: dict[Partition, int]) -> str:
    return json.dumps({named(p): o for p, o in sorted(offsets.items())})
