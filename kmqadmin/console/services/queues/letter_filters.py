"""Which DLQ letters a request asks for: its query parameters, checked by the
console's filter form, so the API and the DLQ browser accept the same filters."""

from collections.abc import Mapping

from kmqadmin.console.forms.letters import LetterFilterForm
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
