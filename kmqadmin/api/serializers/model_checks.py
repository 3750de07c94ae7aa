"""A model's checks (and the broker's bounds a registration must fit) run
on what a request would save, their errors under the fields they name, as the
console's forms show them."""

from collections.abc import Callable

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.fields import get_error_detail


def model_check(check: Callable[[], None]) -> None:
    """Runs ``check``; its Django ValidationError as the API's 400."""
    try:
        check()
    except DjangoValidationError as exc:
        raise serializers.ValidationError(get_error_detail(exc)) from None
