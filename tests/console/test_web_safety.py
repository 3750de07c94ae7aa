"""The web process's own defences: login throttling and the CSP header."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

LOGIN = "/accounts/login/"
PASSWORD = "a long and fine pass phrase"


@pytest.mark.django_db
def test_repeated_failed_logins_lock_the_username_out_even_with_the_right_password(
    settings,
) -> None:
    User.objects.create_user("alice", password=PASSWORD)
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        answer = client.post(LOGIN, {"username": "alice", "password": "guess"})
        assert answer.status_code == 200  # the form again, with its error
    assert client.post(LOGIN, {"username": "alice", "password": "guess"}).status_code == 429
    locked = client.post(LOGIN, {"username": "alice", "password": PASSWORD})
    assert locked.status_code == 429
    assert "_auth_user_id" not in client.session
    # Another username from the same address is not locked.
    User.objects.create_user("bob", password=PASSWORD)
    assert client.post(LOGIN, {"username": "bob", "password": PASSWORD}).status_code == 302


@pytest.mark.django_db
def test_a_successful_login_clears_the_failures_before_it(settings) -> None:
    User.objects.create_user("carol", password=PASSWORD)
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        client.post(LOGIN, {"username": "carol", "password": "guess"})
    assert client.post(LOGIN, {"username": "carol", "password": PASSWORD}).status_code == 302
    client.logout()
    client.post(LOGIN, {"username": "carol", "password": "guess"})
    assert client.post(LOGIN, {"username": "carol", "password": PASSWORD}).status_code == 302


@pytest.mark.django_db
def test_pages_carry_a_csp_without_unsafe_inline_and_admin_gets_the_nonce() -> None:
    admin = User.objects.create_superuser("root", password=PASSWORD)
    client = Client()
    client.force_login(admin)
    page = client.get("/registry/")
    policy = page["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy
    changelist = client.get("/admin/auth/user/")
    nonce = changelist["Content-Security-Policy"].split("'nonce-")[1].split("'")[0]
    assert f'nonce="{nonce}"' in changelist.content.decode()
    docs = client.get("/api/v1/docs/")
    assert b"<script>" not in docs.content  # the docs' script is a file of its own
    assert b'<a href="/" data-console-link>' in docs.content  # and a way back
    assert b'<link rel="icon" href="/static/favicon.svg">' in docs.content


@pytest.mark.django_db
def test_the_ssl_redirect_spares_the_health_check(settings) -> None:
    settings.SECURE_SSL_REDIRECT = True
    client = Client()
    assert client.get("/registry/").status_code == 301
    assert client.get("/healthz").status_code != 301
