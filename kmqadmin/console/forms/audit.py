"""The audit log's filter."""

from django import forms


class AuditFilterForm(forms.Form):
    user = forms.CharField(required=False)
    action = forms.CharField(required=False)
    target = forms.CharField(required=False, help_text="contains")
    since = forms.DateTimeField(required=False)
