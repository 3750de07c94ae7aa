"""An alert rule as an admin writes or edits it on the alerts page."""

from django import forms

from kmqadmin.console.models import AlertRule, Queue, ScheduleTopic
from kmqadmin.console.services import secrets_at_rest
from kmqadmin.console.services.alerts.changes import EDITABLE
from kmqadmin.console.services.alerts.rules import MAX_EMAILS


class AlertRuleForm(forms.ModelForm):
    """The target is chosen when the rule is made, fixed after. The secret
    is never shown back: left empty, an edit keeps the one set."""

    target = forms.ChoiceField(help_text="the queue or schedules topic it watches")
    webhook_secret = forms.CharField(
        required=False,
        max_length=200,
        widget=forms.PasswordInput,
        help_text="signs each body (X-Kmq-Signature: sha256=…); empty keeps the one set",
    )
    remove_webhook_secret = forms.BooleanField(
        required=False, help_text="sign nothing from now on (an empty secret keeps the one set)"
    )
    emails = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=f"one address per line, {MAX_EMAILS} at most",
    )

    class Meta:
        model = AlertRule
        # The secret is a form field of its own: a BinaryField is not editable.
        fields = [name for name in EDITABLE if name != "webhook_secret"]

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            del self.fields["target"]
            return
        self.fields["target"].choices = [
            *((f"queue:{q.pk}", f"queue {q.topic} ({q.cluster})") for q in _queues()),
            *((f"schedules:{t.pk}", f"schedules {t.topic} ({t.cluster})") for t in _schedules()),
        ]
        self.order_fields(["target"])

    def clean_target(self) -> str:
        kind, _, pk = self.cleaned_data["target"].partition(":")
        model = Queue if kind == "queue" else ScheduleTopic
        found = model.objects.filter(pk=pk).first()
        if found is None:
            raise forms.ValidationError("it is no longer registered")
        setattr(self.instance, "queue" if kind == "queue" else "schedules", found)
        return self.cleaned_data["target"]

    def clean_emails(self) -> str:
        lines = [line.strip() for line in self.cleaned_data["emails"].splitlines() if line.strip()]
        if len(lines) > MAX_EMAILS:
            raise forms.ValidationError(f"{MAX_EMAILS} addresses at most")
        for line in lines:
            forms.EmailField().clean(line)
        return "\n".join(lines)

    def clean(self) -> dict:
        """The secret: a new one, none if asked, else the one set."""
        data = super().clean()
        secret, kept = data.get("webhook_secret"), self.instance.webhook_secret or b""
        if data.get("remove_webhook_secret"):
            kept = b""
        self.instance.webhook_secret = secrets_at_rest.encrypt(secret) if secret else kept
        data["webhook_secret"] = self.instance.webhook_secret
        return data

    def changed_fields(self) -> dict[str, object]:
        """What an edit sets: the editable fields as cleaned."""
        return {name: self.cleaned_data[name] for name in EDITABLE}


def _queues() -> list[Queue]:
    return list(Queue.objects.select_related("cluster").order_by("topic"))


def _schedules() -> list[ScheduleTopic]:
    return list(ScheduleTopic.objects.select_related("cluster").order_by("topic"))
