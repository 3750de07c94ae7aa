"""JSONPath expressions as people type them: a browse filter, a masking rule.

Both compile with python-jsonpath (RFC 9535), once, when the filter or the
rules are built, so an expression that does not compile is refused there,
naming it, and never becomes an error per record.
"""

import jsonpath

JsonPath = jsonpath.JSONPath | jsonpath.CompoundJSONPath


class RuleError(ValueError):
    """What a person typed cannot be used; ``part`` says which field of the
    form it came from, the message which expression and why."""

    def __init__(self, part: str, message: str) -> None:
        super().__init__(message)
        self.part = part


def compiled(text: str, error: type[RuleError], part: str) -> JsonPath:
    """``text`` compiled, or ``error`` for ``part`` with the first line of
    python-jsonpath's reason (the lines after it draw a caret under it)."""
    try:
        return jsonpath.compile(text)
    except jsonpath.JSONPathError as exc:
        first_line = str(exc).splitlines()[0]
        raise error(part, f"JSONPath {text!r}: {first_line}") from None
