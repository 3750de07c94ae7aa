"""The answer to an htmx action: a notice swapped into the page's flash area."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def flash(request: HttpRequest, text: str, ok: bool = True, status: int = 200) -> HttpResponse:
    """htmx swaps 2xx answers only; the page's script lets 4xx notices in too,
    so the reason reaches the person who clicked."""
    return render(request, "console/_flash.html", {"text": text, "ok": ok}, status=status)
