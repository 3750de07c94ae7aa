"""The login page and its rules without a provider that answers: single
sign-on configured but unreachable is an error on the page and a FAIL line
in doctor, never a 500, and passwords still work as KMQ_LOCAL_LOGIN allows."""

import io
from collections.abc import Iterator

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from kmqadmin.console.models import AuditEntry
from kmqadmin.console.oidc import provider
from kmqadmin.kafka.embedded.broker import free_port
from tests.users import user_with

pytestmark = pytest.mark.django_db
PASSWORD = "a-long-enough-password-1"


@pytest.fixture
def unreachable(settings) -> Iterator[str]:
    """Single sign-on configured on an issuer nothing listens on."""
    issuer = f"http://127.0.0.1:{free_port()}/realms/acme"
    settings.KMQ_OIDC_ISSUER = issuer
    settings.KMQ_OIDC_CLIENT_ID = settings.KMQ_OIDC_AUDIENCE = "kmqadmin"
    settings.KMQ_OIDC_CLIENT_SECRET = "secret"
    settings.KMQ_OIDC_PROVIDER_NAME = "Acme SSO"
    settings.AUTHENTICATION_BACKENDS = [
        *settings.AUTHENTICATION_BACKENDS,
        "kmqadmin.console.oidc.backend.SsoBackend",
    ]
    provider.forget()
    yield issuer
    provider.forget()


def with_password(role: str) -> str:
    user = user_with(role, f"{role}-local")
    user.set_password(PASSWORD)
    user.save()
    return user.username


def log_in(username: str) -> tuple[Client, object]:
    client = Client()
    answer = client.post("/accounts/login/", {"username": username, "password": PASSWORD})
    return client, answer


def test_without_an_issuer_there_is_no_sign_in_button_and_no_sso_urls() -> None:
    page = Client().get("/accounts/login/")
    assert page.status_code == 200 and b"Sign in with" not in page.content
    assert Client().get("/oidc/authenticate/").status_code == 404
    assert Client().get("/oidc/callback/?code=x&state=y").status_code == 404


def test_an_unreachable_issuer_is_shown_and_passwords_still_work(unreachable: str) -> None:
    page = Client().get("/accounts/login/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "Sign in with Acme SSO" in text
    assert "Sign-in with Acme SSO is unavailable" in text and "connection refused" in text
    client, answer = log_in(with_password("admin"))
    assert answer.status_code == 302, answer.content.decode()
    assert client.get("/").status_code == 200


def test_starting_a_sign_in_with_the_issuer_down_is_a_502_on_the_login_page(
    unreachable: str,
) -> None:
    answer = Client().get("/oidc/authenticate/?next=/queues/")
    assert answer.status_code == 502
    assert "Sign-in with Acme SSO is unavailable" in answer.content.decode()
    assert b'name="password"' in answer.content  # an admin can still log in


@pytest.mark.parametrize(
    "query",
    ["", "?code=abc&state=never-issued", "?error=access_denied&error_description=cancelled"],
)
def test_a_callback_not_started_here_or_refused_there_says_so(unreachable: str, query: str) -> None:
    answer = Client().get(f"/oidc/callback/{query}")
    assert answer.status_code == 400, answer.content.decode()[:500]
    text = answer.content.decode()
    assert "Sign-in with Acme SSO did not complete" in text
    if "error=" in query:
        assert "Acme SSO said access_denied" in text
        assert "cancelled" not in text  # free text from a link is never shown


def test_a_callback_with_an_error_does_not_log_out_whoever_opens_it(unreachable: str) -> None:
    client, answer = log_in(with_password("admin"))
    assert answer.status_code == 302
    assert client.get("/oidc/callback/?error=access_denied").status_code == 400
    assert client.get("/").status_code == 200  # still logged in


def test_a_password_posted_with_a_code_in_the_url_is_a_password_login(unreachable: str) -> None:
    """Not the provider's callback: a wrong password is a counted failure,
    not a call to the provider (an error that would escape the count)."""
    username = with_password("admin")
    client = Client()
    wrong = client.post(
        "/accounts/login/?code=x&state=y", {"username": username, "password": "wrong"}
    )
    assert wrong.status_code == 200 and b"Please enter a correct username" in wrong.content
    failed = AuditEntry.objects.filter(action="login", target=username, status="failed")
    assert failed.count() == 1
    right = client.post(
        "/accounts/login/?code=x&state=y", {"username": username, "password": PASSWORD}
    )
    assert right.status_code == 302


@pytest.mark.parametrize(
    ("mode", "role", "let_in"),
    [
        ("on", "viewer", True),
        ("admins", "viewer", False),
        ("admins", "admin", True),
        ("off", "admin", False),
    ],
)
def test_local_login_follows_its_switch(
    unreachable: str, settings, mode: str, role: str, let_in: bool
) -> None:
    settings.KMQ_LOCAL_LOGIN = mode
    username = with_password(role)
    client, answer = log_in(username)
    assert (answer.status_code == 302) is let_in, answer.content.decode()[:800]
    if not let_in:
        text = answer.content.decode()
        if mode == "off":
            assert "switched off" in text and "Sign in with Acme SSO." in text
        else:  # the words of a wrong password: the answer says nothing of the password
            assert "Please enter a correct username" in text and "Admins only" in text
            failed = AuditEntry.objects.filter(action="login", target=username, status="failed")
            assert failed.count() == 1
        assert client.get("/").status_code == 302  # still not logged in
        if mode == "off":
            assert b'name="password"' not in Client().get("/accounts/login/").content


def test_the_admin_sites_login_is_the_one_login_page(settings) -> None:
    answer = Client().get("/admin/login/?next=/admin/console/queue/")
    assert answer.status_code == 302
    assert answer["Location"] == "/accounts/login/?next=/admin/console/queue/"


def test_doctor_fails_the_sso_line_naming_the_setting(unreachable: str) -> None:
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("kmq", "doctor", stdout=out)
    [line] = [line for line in out.getvalue().splitlines() if " sso " in line]
    assert line.startswith("FAIL") and unreachable in line and "KMQ_OIDC_ISSUER" in line, line


def test_a_password_login_is_audited_without_a_via(unreachable: str) -> None:
    log_in(with_password("operator"))
    entry = AuditEntry.objects.filter(action="login", target="operator-local").get()
    assert "via" not in (entry.after or {})


def test_a_password_session_logs_out_here_alone(unreachable: str) -> None:
    """No provider session to end, and the provider down changes nothing."""
    client, _ = log_in(with_password("admin"))
    answer = client.post("/accounts/logout/")
    assert answer.status_code == 302 and answer["Location"] == "/accounts/login/"
    assert client.get("/").status_code == 302
