"""A registered cluster's consumer groups and share groups, a group's page,
and the admin's offset reset: a preview (current -> new per partition),
then the confirmation that applies exactly what was previewed."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from kmqadmin.console.decorators import admin, viewer
from kmqadmin.console.forms.reset import ConfirmResetForm, GroupResetForm, offsets_json
from kmqadmin.console.models import Cluster
from kmqadmin.console.services.groups import listing as groups
from kmqadmin.console.services.roles import Role, role_of
from kmqadmin.console.views.flash import flash
from kmqadmin.kafka.admin.groups import GroupNotEmpty, GroupNotFound, Kind
from kmqadmin.kafka.admin.offset_reset import BadReset


@viewer
def clusters(request: HttpRequest) -> HttpResponse:
    """Which cluster's groups: straight to the one when there is one."""
    registered = list(Cluster.objects.all())
    if len(registered) == 1:
        return redirect("console:groups", cluster=registered[0].name)
    return render(request, "console/group_clusters.html", {"clusters": registered})


@viewer
def index(request: HttpRequest, cluster: str) -> HttpResponse:
    shown = groups.listing(groups.cluster_or_404(cluster))
    return render(request, "console/groups.html", {"shown": shown})


@viewer
def detail(request: HttpRequest, cluster: str, kind: Kind, group_id: str) -> HttpResponse:
    found = groups.detail(groups.cluster_or_404(cluster), kind, group_id)
    context = {
        "shown": found,
        "is_admin": role_of(request.user) >= Role.ADMIN,
        "reset": GroupResetForm(),
    }
    return render(request, "console/group.html", context)


@admin
@require_POST
def reset(request: HttpRequest, cluster: str, kind: Kind, group_id: str) -> HttpResponse:
    """Without ``offsets``: the preview (a fragment with the confirmation
    form). With them: the apply of exactly those, audited. A refusal is a
    notice with its reason: 409 members connected, 404 no such group, 400
    what the cluster does not have, 502 the broker failed."""
    found = groups.cluster_or_404(cluster)
    step = _apply if "offsets" in request.POST else _preview
    try:
        return step(request, found, kind, group_id)
    except GroupNotEmpty as exc:
        return flash(request, str(exc), ok=False, status=409)
    except GroupNotFound as exc:
        return flash(request, str(exc), ok=False, status=404)
    except BadReset as exc:
        return flash(request, str(exc), ok=False, status=400)
    except groups.BROKER_ERRORS as exc:
        return flash(request, str(exc), ok=False, status=502)


def _preview(request: HttpRequest, cluster: Cluster, kind: Kind, group_id: str) -> HttpResponse:
    form = GroupResetForm(request.POST)
    if not form.is_valid():
        return flash(request, form.errors.as_text(), ok=False, status=400)
    planned = groups.preview(cluster, kind, group_id, form.group_target())
    offsets = {"offsets": offsets_json(planned.offsets)}
    context = {
        "plan": planned,
        "confirm": ConfirmResetForm(initial=request.POST.dict() | offsets),
        "kind": kind,
        "cluster": cluster,
    }
    return render(request, "console/_group_reset_preview.html", context)


def _apply(request: HttpRequest, cluster: Cluster, kind: Kind, group_id: str) -> HttpResponse:
    form = ConfirmResetForm(request.POST)
    if not form.is_valid():
        return flash(request, form.errors.as_text(), ok=False, status=400)
    offsets = form.cleaned_data["offsets"]
    done = groups.apply(request.user, cluster, kind, group_id, form.group_target(), offsets)
    moved = ", ".join(f"{groups.named(m.partition)} {m.current}→{m.new}" for m in done.moves)
    refused = "; ".join(f"{groups.named(p)}: {e}" for p, e in sorted(done.errors.items()))
    text = f"reset {group_id}: {moved}" + (f"; refused: {refused}" if refused else "")
    return flash(request, text, ok=not refused)
