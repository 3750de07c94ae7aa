"""WebSocket routes for the console's live views."""

from django.urls import URLPattern

websocket_urlpatterns: list[URLPattern] = []
