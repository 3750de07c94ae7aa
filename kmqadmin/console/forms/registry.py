"""The registry's forms (the registry pages' and /admin/'s): a cluster, a
queue, a schedules topic. A secret is only ever a reference here, never shown
back."""

from django import forms
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ValidationError

from kmqadmin.console.models import Cluster, Queue, ScheduleTopic
from kmqadmin.console.models.clusters import SCHEMA_REGISTRY_FIELDS, SECURITY_FIELDS
from kmqadmin.console.models.queues import REGISTRATION_FIELDS
from kmqadmin.console.services.queues.backend_switch import SwitchRefused, check_switch
from kmqadmin.console.services.queues.broker_bounds import check_share_bounds
from kmqadmin.kafka.client.security.cluster import SECRET_REFERENCES, reference_problem


class ReferenceInput(forms.TextInput):
    """A secret's reference (env:NAME, file:PATH) is shown again; anything
    else is not, as it may be the secret itself typed in by mistake."""

    def format_value(self, value: object) -> str | None:
        if isinstance(value, str) and reference_problem(value) is not None:
            return None
        return super().format_value(value)


class ClusterForm(forms.ModelForm):
    """Also the admin's: neither renders a secret back."""

    class Meta:
        model = Cluster
        fields = ["name", "bootstrap_servers", *SECURITY_FIELDS, *SCHEMA_REGISTRY_FIELDS]
        widgets = {
            name: ReferenceInput for name in (*SECRET_REFERENCES, "schema_registry_password")
        }

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["security_protocol"].required = False  # not given: PLAINTEXT

    def clean_security_protocol(self) -> str:
        return self.cleaned_data["security_protocol"] or "PLAINTEXT"


class QueueForm(forms.ModelForm):
    """The registry's and /admin/'s. ``user`` is who saves it: a refused
    backend switch is audited as theirs."""

    user: AbstractBaseUser | None = None

    class Meta:
        model = Queue
        fields = REGISTRATION_FIELDS

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["backend"].required = False  # not given: unchanged (kmq when new)
        self.fields["marker_format"].required = False  # not given: unchanged (compact when new)

    def clean_marker_format(self) -> str:
        """Switchable at any time: every reader reads both formats."""
        return self.cleaned_data["marker_format"] or self.instance.marker_format

    def clean_backend(self) -> str:
        """Not switched while messages are in flight (the instance still
        holds the saved backend here: the form copies onto it after)."""
        backend = self.cleaned_data["backend"] or self.instance.backend
        if self.instance.pk is not None:
            try:
                check_switch(self.user, self.instance, backend)
            except SwitchRefused as exc:
                raise forms.ValidationError(str(exc), code="in_flight") from None
        return backend

    def _post_clean(self) -> None:
        """After the model's own checks (on the instance as it would be
        saved), the broker's bounds, asked only of a queue valid so far."""
        super()._post_clean()
        if not self._errors:
            try:
                check_share_bounds(self.instance)
            except ValidationError as exc:
                self.add_error(None, exc)


class TopicListField(forms.CharField):
    """Topic names, one a line (or separated by spaces or commas), as a list;
    the model's validator checks each name."""

    widget = forms.Textarea(attrs={"rows": 4})

    def prepare_value(self, value: object) -> object:
        return "\n".join(value) if isinstance(value, list) else value

    def to_python(self, value: str | None) -> list[str]:
        text = super().to_python(value)
        return list(dict.fromkeys(text.replace(",", " ").split()))


class ScheduleTopicForm(forms.ModelForm):
    allowed_targets = TopicListField(
        required=False,
        label="Allowed target topics",
        help_text="One a line; its schedules fire into these alone. Empty: any topic.",
    )

    class Meta:
        model = ScheduleTopic
        fields = ["cluster", "topic", "group_id", "partitions", "allowed_targets"]

    def __init__(self, *args, **kwargs) -> None:
        """A new registration proposes the registered queues as its targets."""
        super().__init__(*args, **kwargs)
        if self.instance.pk is None:
            queues = Queue.objects.order_by("topic").values_list("topic", flat=True)
            self.initial["allowed_targets"] = list(dict.fromkeys(queues))
