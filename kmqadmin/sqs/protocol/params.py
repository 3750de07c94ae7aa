"""An action's parameters read with their types checked: a JSON body can
hold anything, so a wrong type is a 400 naming the parameter, never a
TypeError (and so a 500) further in."""

from typing import Any

from kmqadmin.sqs.protocol.errors import invalid_parameter_value, missing_parameter

Params = dict[str, Any]
# SQS's longest visibility timeout (12 hours), wherever a client sets one.
MAX_VISIBILITY_S = 43_200


def text(params: Params, name: str, required: bool = True) -> str | None:
    value = params.get(name)
    if value is None or value == "":
        if required:
            raise missing_parameter(name)
        return None
    if not isinstance(value, str):
        raise _invalid(name, value, "must be a string")
    return value


def integer(params: Params, name: str, low: int, high: int) -> int | None:
    """SQS's words for a number out of range, e.g. MaxNumberOfMessages 11."""
    value = params.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _invalid(name, value, f"Must be between {low} and {high}, if provided.")
    return value


def visibility_timeout(params: Params) -> int | None:
    """VisibilityTimeout as ReceiveMessage and ChangeMessageVisibility take
    it: whole seconds, 0 to 12 hours."""
    return integer(params, "VisibilityTimeout", 0, MAX_VISIBILITY_S)


def strings(params: Params, name: str) -> list[str]:
    value = params.get(name) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _invalid(name, value, "must be a list of strings")
    return value


def string_map(params: Params, name: str) -> dict[str, str]:
    value = params.get(name) or {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise _invalid(name, value, "must map strings to strings")
    return value


def _invalid(name: str, value: Any, reason: str) -> Exception:
    shown = str(value)[:100]
    return invalid_parameter_value(
        f"Value {shown} for parameter {name} is invalid. Reason: {reason}"
    )
