"""The nav's search box: a kmq-id goes to its message, a key lists its hits."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from kmqadmin.console.decorators import viewer
from kmqadmin.console.models.clusters import cluster_query
from kmqadmin.console.services.browsing import search as searching
from kmqadmin.console.services.roles import role_of


@viewer
def search(request: HttpRequest) -> HttpResponse:
    context: dict = {
        "query": request.GET.get("q", ""),
        "window": searching.WINDOW,
        "hits_cap": searching.HITS,
    }
    try:
        query = searching.checked(context["query"])
    except searching.BadQuery as exc:
        return render(request, "console/search.html", context | {"error": str(exc)}, status=400)
    queues = searching.queues_of_id(query)
    if len(queues) == 1:
        url = reverse("console:message", args=(queues[0].topic, query))
        return redirect(f"{url}?{cluster_query(queues[0])}")
    if queues:  # the same topic on several clusters: which one is the person's
        return render(request, "console/search.html", context | {"id_queues": queues})
    results = searching.by_key(query, role_of(request.user))
    return render(request, "console/search.html", context | {"results": results})
