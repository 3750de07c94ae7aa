"""The audit log, filtered and paged in the database."""

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from kmqadmin.console.decorators import viewer
from kmqadmin.console.forms.audit import AuditFilterForm
from kmqadmin.console.models import AuditEntry
from kmqadmin.console.services.audit.diff import acted_on, changes

PAGE = 50
# Actions that take a thing away: their entry's before is what went.
REMOVALS = frozenset({"cancel schedule", "admin delete", "remove cluster"})


@viewer
def log(request: HttpRequest) -> HttpResponse:
    entries = AuditEntry.objects.all()
    form = AuditFilterForm(request.GET)
    if form.is_valid():
        data = form.cleaned_data
        if data["user"]:
            entries = entries.filter(username=data["user"])  # kept when the user is deleted
        if data["action"]:
            entries = entries.filter(action=data["action"])
        if data["target"]:
            entries = entries.filter(target__contains=data["target"])
        if data["since"]:
            entries = entries.filter(at__gte=data["since"])
    page = Paginator(entries, PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    rows = [_row(entry) for entry in page]
    context = {"form": form, "page": page, "rows": rows, "query": query.urlencode()}
    return render(request, "console/audit.html", context)


def _row(entry: AuditEntry) -> dict:
    """The entry with its changes, the fields it left alone apart, folded;
    or, for an action on a thing that changes none of its fields (ack, fire
    now, redrive), what it acted on."""
    if entry.after is None and entry.action not in REMOVALS:
        return {"entry": entry, "on": acted_on(entry.before)}
    diff = changes(entry.before, entry.after)
    return {
        "entry": entry,
        "changed": [c for c in diff if c.changed],
        "same": [c for c in diff if not c.changed],
    }
