"""The icon: named by every page, and at /favicon.ico for what names none."""

import pytest
from django.test import Client


@pytest.mark.django_db
def test_favicon_ico_leads_to_the_icon_every_page_names(client: Client) -> None:
    answer = client.get("/favicon.ico")
    assert answer.status_code == 301
    icon = client.get(answer["Location"])
    assert icon.status_code == 200
    assert icon["Content-Type"] == "image/svg+xml"
    login = client.get("/accounts/login/")
    assert f'<link rel="icon" href="{answer["Location"]}"'.encode() in login.content
