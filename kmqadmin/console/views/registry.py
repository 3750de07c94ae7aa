"""Clusters, queues and schedules topics: registered by admins, stored in SQL."""

from django.contrib import messages
from django.db.models import Model
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from kmqadmin.console.decorators import admin
from kmqadmin.console.forms.registry import ClusterForm, QueueForm, ScheduleTopicForm
from kmqadmin.console.models import Cluster, Queue, ScheduleTopic
from kmqadmin.console.services.audit import trail as audit

FORMS: dict[str, type[ModelForm]] = {
    "cluster": ClusterForm,
    "queue": QueueForm,
    "schedules": ScheduleTopicForm,
}
# What each kind is called on its page: "Register a schedules topic".
KINDS = {"cluster": "cluster", "queue": "queue", "schedules": "schedules topic"}


@admin
def index(request: HttpRequest) -> HttpResponse:
    context = {
        "clusters": Cluster.objects.all(),
        "queues": Queue.objects.select_related("cluster"),
        "schedules": ScheduleTopic.objects.select_related("cluster"),
    }
    return render(request, "console/registry.html", context)


@admin
def register(request: HttpRequest, kind: str, pk: int | None = None) -> HttpResponse:
    """Create (no pk) or edit one cluster, queue or schedules topic. Saving a
    queue also creates its missing topics, so it works at once."""
    form_class = FORMS.get(kind)
    if form_class is None:
        return redirect("console:registry")
    model = form_class._meta.model
    instance = get_object_or_404(model, pk=pk) if pk is not None else None
    before = _fields(_current(instance, form_class)) if instance else None
    initial = _initial(request, kind) if instance is None else None
    form = form_class(request.POST or None, instance=instance, initial=initial)
    form.user = request.user  # whose a refused backend switch is (QueueForm)
    if request.method == "POST" and form.is_valid():
        # Validated, so the intent is what will be saved (form.instance holds it).
        with audit.action(
            request.user, f"register {kind}", str(form.instance), before, _fields(form.cleaned_data)
        ) as entry:
            saved = form.save()
            created = saved.config().ensure_topics(saved.partitions) if kind != "cluster" else []
            entry.after = {**entry.after, "topics created": created}
        messages.success(request, f"saved {kind} {saved}" + _created(created))
        return redirect("console:registry")
    status = 400 if request.method == "POST" else 200
    context = {"form": form, "kind": KINDS[kind], "instance": instance}
    return render(request, "console/register.html", context, status=status)


def _initial(request: HttpRequest, kind: str) -> dict[str, object]:
    """What a new registration starts from: the topic a "not registered"
    page linked with, and the cluster when there is only one to choose."""
    initial: dict[str, object] = {}
    if kind != "cluster":
        if topic := request.GET.get("topic"):
            initial["topic"] = topic
        only = list(Cluster.objects.all()[:2])
        if len(only) == 1:
            initial["cluster"] = only[0].pk
    return initial


def _current(instance: Model, form_class: type[ModelForm]) -> dict:
    """What the form edits, as the instance holds it: the same fields and
    shapes as the cleaned data the entry's after is (a cluster by its name,
    not its key), so the audit log's diff shows only what changed."""
    return {
        name: getattr(instance, name) for name in form_class.base_fields if hasattr(instance, name)
    }


def _fields(data: dict) -> dict:
    """JSON-able: related objects and numbers as the text a person reads."""
    return {name: None if value is None else str(value) for name, value in data.items()}


def _created(created: list[str]) -> str:
    return f"; created topics {', '.join(created)}" if created else ""
