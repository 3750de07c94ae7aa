"""The topic browser's query, as a form: where to start, which way, and
which records. The console's browser renders and reads it, and the API's
records page reads its query parameters with it, so both take the same
starts and filters and refuse the same bad ones."""

from dataclasses import replace

from django import forms

from kmqadmin.console.services.coordinates import MAX_OFFSET, MAX_PARTITION
from kmqadmin.kafka.client.clock import epoch_ms
from kmqadmin.kafka.inspect.browse import NEWEST, OLDEST, Caps, Seek
from kmqadmin.kafka.inspect.record_filter import FilterError, RecordFilter

# No query: the newest records of the first partition; a query that leaves
# them out: from the oldest, forward.
FIRST_LOOK = {"start": NEWEST, "direction": "backward"}
DEFAULTS = {"start": OLDEST, "direction": "forward"}
# Every page's caps; a form's limit may only lower the records returned.
CAPS = Caps()
MAX_RECORDS = CAPS.records


def _hint(text: str) -> forms.TextInput:
    return forms.TextInput(attrs={"placeholder": text})


class BrowseForm(forms.Form):
    partition = forms.IntegerField(min_value=0, max_value=MAX_PARTITION, required=False)
    start = forms.ChoiceField(
        choices=[
            (NEWEST, "newest"),
            (OLDEST, "oldest"),
            ("offset", "an offset"),
            ("time", "a time"),
        ]
    )
    offset = forms.IntegerField(min_value=0, max_value=MAX_OFFSET, required=False)
    at = forms.DateTimeField(
        required=False,
        label="Time",
        widget=forms.TextInput(attrs={"placeholder": "ISO 8601, UTC unless it says"}),
        error_messages={"invalid": "expected ISO 8601, e.g. 2026-11-22T10:00:00Z"},
    )
    direction = forms.ChoiceField(
        choices=[("forward", "forward"), ("backward", "backward (before it)")]
    )
    limit = forms.IntegerField(min_value=1, max_value=MAX_RECORDS, required=False)
    key = forms.CharField(required=False, label="Key contains", widget=_hint("order-"))
    header = forms.CharField(required=False, widget=_hint("NAME or NAME=VALUE"))
    contains = forms.CharField(required=False, label="Payload contains", widget=_hint("text"))
    json_path = forms.CharField(
        required=False, label="JSONPath", widget=_hint("$[?@.status == 'failed']")
    )

    def clean(self) -> dict:
        data = super().clean()
        start = data.get("start")
        if start == "offset" and data.get("offset") is None:
            self.add_error("offset", "starting at an offset needs the offset")
        if start == "time" and data.get("at") is None:
            self.add_error("at", "starting at a time needs the time")
        if data.get("at") is not None and epoch_ms(data["at"]) < 0:
            self.add_error("at", "the time must be after 1970")
        try:
            data["match"] = RecordFilter.build(
                data.get("key") or "",
                data.get("header") or "",
                data.get("contains") or "",
                data.get("json_path") or "",
            )
        except FilterError as exc:
            self.add_error(exc.part, str(exc))
        return data

    def seek(self, first_partition: int) -> Seek:
        data = self.cleaned_data
        start = data["start"]
        return Seek(
            partition=first_partition if data["partition"] is None else data["partition"],
            offset=data["offset"] if start == "offset" else None,
            time_ms=epoch_ms(data["at"]) if start == "time" else None,
            edge=start if start in (NEWEST, OLDEST) else OLDEST,
            backward=data["direction"] == "backward",
        )

    def caps(self) -> Caps:
        return replace(CAPS, records=self.cleaned_data["limit"] or CAPS.records)

    def record_filter(self) -> RecordFilter:
        return self.cleaned_data["match"]


def browse_form(query: dict[str, str]) -> BrowseForm:
    return BrowseForm(DEFAULTS | query if query else FIRST_LOOK)
