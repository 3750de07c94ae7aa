"""Which DLQ letters a request asks for: its query parameters, checked by one
form, so the API and the DLQ page accept the same filters. The form lives
here, below the console's forms, because the API parses with it too."""

from collections.abc import Mapping
from datetime import datetime

from django import forms

from kmqadmin.console.services.coordinates import MAX_OFFSET, MAX_PARTITION
from kmqadmin.kafka.client.clock import epoch_ms
from kmqadmin.kmq import LetterFilter


class BadFilter(ValueError):
    """Parameters the form refused; ``errors`` maps each field to its messages."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__(errors)
        self.errors = errors


def letter_filter(params: Mapping[str, str]) -> LetterFilter:
    form = LetterFilterForm(params)
    if not form.is_valid():
        raise BadFilter({name: list(errors) for name, errors in form.errors.items()})
    return form.letter_filter()


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


def _given(text: str) -> bytes | None:
    return text.encode() if text else None


def _ms(at: datetime | None) -> int | None:
    return None if at is None else epoch_ms(at)
