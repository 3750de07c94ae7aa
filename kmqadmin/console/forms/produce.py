"""The form a person produces a message with (a queue's produce page, a
reproduce, a redrive with edits); the rules are kmq.draft's."""

from django import forms
from django.http import QueryDict

from kmqadmin.kmq.draft import Draft, draft, header_rows

ENCODING_CHOICES = [("utf-8", "text"), ("json", "JSON"), ("base64", "base64")]
# Empty header rows offered below those a message already has.
SPARE_ROWS = 3


class ProduceForm(forms.Form):
    key = forms.CharField(required=False, strip=False, help_text="empty: no key")
    value = forms.CharField(required=False, strip=False, widget=forms.Textarea(attrs={"rows": 8}))
    encoding = forms.ChoiceField(choices=ENCODING_CHOICES, label="Value as")
    partition = forms.IntegerField(
        required=False, min_value=0, help_text="empty: the partitioner's choice"
    )

    def draft(self, data: QueryDict) -> Draft:
        """The message the form holds, with the header rows of ``data``
        (header_name / header_value); BadInput saying what is wrong."""
        fields = self.cleaned_data
        return draft(
            fields["value"],
            fields["encoding"],
            key=fields["key"] or None,
            headers=header_rows(data.getlist("header_name"), data.getlist("header_value")),
            partition=fields["partition"],
        )


def header_rows_shown(headers: dict[str, str]) -> list[tuple[str, str]]:
    """The rows the page shows: the message's headers, then spare empty ones."""
    return list(headers.items()) + [("", "")] * SPARE_ROWS
