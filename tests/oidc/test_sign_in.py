"""Single sign-on against a real identity provider: Keycloak (tests/keycloak.py)
and a web process as `make run` serves it, driven by chromium through
Keycloak's own login form; the API's bearer tokens are Keycloak's too."""

import base64
import json
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from playwright.sync_api import Browser, Page

from kmqadmin.console.cli.processes import web as web_process
from kmqadmin.kafka.embedded.broker import free_port
from tests.chromium import launched
from tests.e2e.conftest import screenshot
from tests.keycloak import KeycloakServer
from tests.process import kill9, manage, spawn, wait_for

ADMIN_PASSWORD = "local-admin-password-1"
ROLE_OF = """
from django.contrib.auth import get_user_model
from kmqadmin.console.services.roles import role_of
user = get_user_model().objects.filter(username={name!r}).first()
print(role_of(user).name if user else "no user")
"""
SET_UP = """
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
admin = get_user_model().objects.create_user("root", password={password!r})
admin.groups.add(Group.objects.get(name="admin"))
"""


@dataclass(frozen=True)
class Web:
    url: str
    settings: dict[str, str]
    log: Path

    def role_of(self, username: str) -> str:
        answer = manage("shell", "-v", "0", "-c", ROLE_OF.format(name=username), **self.settings)
        assert answer.returncode == 0, answer.stderr
        return answer.stdout.strip()

    def audit(self, action: str, target: str) -> list[dict]:
        code = (
            "import json; from kmqadmin.console.models import AuditEntry; "
            f"print(json.dumps([e.after for e in AuditEntry.objects.filter("
            f"action={action!r}, target={target!r}).order_by('id')]))"
        )
        answer = manage("shell", "-v", "0", "-c", code, **self.settings)
        assert answer.returncode == 0, answer.stderr
        return json.loads(answer.stdout)


@pytest.fixture(scope="module")
def web(keycloak: KeycloakServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Web]:
    data = tmp_path_factory.mktemp("sso-web")
    settings = {
        "KMQ_DATA_DIR": str(data),
        "KMQ_OIDC_ISSUER": keycloak.issuer(),
        "KMQ_OIDC_CLIENT_ID": "kmqadmin",
        "KMQ_OIDC_CLIENT_SECRET": "kmqadmin-secret",
        "KMQ_OIDC_PROVIDER_NAME": "Keycloak",
        "KMQ_LOCAL_LOGIN": "admins",
    }
    assert manage("migrate", **settings).returncode == 0
    made = manage("shell", "-c", SET_UP.format(password=ADMIN_PASSWORD), **settings)
    assert made.returncode == 0, made.stderr
    port = free_port()
    log = data / "web.log"
    process = spawn(web_process("127.0.0.1", port, "INFO"), log, **settings)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _status(f"{url}/accounts/login/") == 200, 60, "the web process")
        yield Web(url, settings, log)
    finally:
        kill9(process)


def _status(url: str) -> int | None:
    try:
        return requests.get(url, timeout=2, allow_redirects=False).status_code
    except requests.RequestException:
        return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launched() as browser:
        yield browser


@pytest.fixture
def page(browser: Browser, web: Web) -> Iterator[Page]:
    context = browser.new_context(base_url=web.url, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page
    context.close()


def sign_in(page: Page, web: Web, username: str) -> None:
    """Through our login page's button and Keycloak's own form."""
    page.goto("/accounts/login/?next=/queues/")
    page.get_by_role("button", name="Sign in with Keycloak").click()
    page.wait_for_url(lambda url: "/realms/kmq/" in url)
    page.locator("#username").fill(username)
    page.locator("#password").fill(f"{username}-password")
    page.locator("#kc-login").click()
    page.wait_for_url(lambda url: url.startswith(web.url))


def test_an_operator_signs_in_through_keycloak_and_lands_with_its_role(
    page: Page, web: Web
) -> None:
    page.goto("/accounts/login/")
    screenshot(page, "sso-login")
    sign_in(page, web, "alice")
    assert urllib.parse.urlsplit(page.url).path == "/queues/"
    assert page.get_by_role("button", name="Log out alice").is_visible()
    assert web.role_of("alice") == "OPERATOR"
    [login] = web.audit("login", "alice")
    assert login["via"] == "single sign-on"


def test_a_viewer_and_an_admin_get_theirs(page: Page, web: Web) -> None:
    sign_in(page, web, "dave")
    assert web.role_of("dave") == "VIEWER"
    page.context.clear_cookies()
    sign_in(page, web, "carol")
    assert web.role_of("carol") == "ADMIN"


def test_someone_in_no_mapped_group_is_refused_with_a_page_that_says_why(
    page: Page, web: Web
) -> None:
    sign_in(page, web, "bob")
    assert page.get_by_role("heading", name="Signed in, but not let in").is_visible()
    text = page.locator("main").inner_text()
    assert "you are in none of the groups that give a role here" in text
    assert "kmq-operators" in text
    screenshot(page, "sso-refused")
    assert web.role_of("bob") == "no user"
    page.goto("/")
    assert urllib.parse.urlsplit(page.url).path == "/accounts/login/"


def test_a_group_removed_at_keycloak_is_the_role_removed_at_the_next_sign_in(
    page: Page, web: Web, keycloak: KeycloakServer
) -> None:
    keycloak.add_to_group("carol", "kmq-admins")
    sign_in(page, web, "carol")
    assert web.role_of("carol") == "ADMIN"
    keycloak.remove_from_group("carol", "kmq-admins")
    keycloak.add_to_group("carol", "kmq-viewers")
    try:
        page.context.clear_cookies()
        sign_in(page, web, "carol")
        assert web.role_of("carol") == "VIEWER"
        assert {"removed": ["admin"]} in web.audit("role change", "carol")
    finally:
        keycloak.remove_from_group("carol", "kmq-viewers")
        keycloak.add_to_group("carol", "kmq-admins")


def test_a_callback_with_a_state_or_code_not_ours_is_a_400(page: Page, web: Web) -> None:
    state = started_sign_in(page)
    wrong_state = page.goto(f"{web.url}/oidc/callback/?code=made-up&state=not-{state}")
    assert wrong_state is not None and wrong_state.status == 400
    assert "did not verify" in page.locator("main").inner_text()
    state = started_sign_in(page)
    made_up = page.goto(f"{web.url}/oidc/callback/?code=made-up&state={state}")
    assert made_up is not None and made_up.status == 400
    assert "Keycloak refused it (HTTP 400)" in page.locator("main").inner_text()


def started_sign_in(page: Page) -> str:
    """A sign-in begun here and left at Keycloak's form: the state it carries."""
    page.goto("/oidc/authenticate/")
    page.wait_for_url(lambda url: "/realms/kmq/" in url)
    return urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)["state"][0]


def test_a_session_from_keycloak_ends_at_a_fixed_time(page: Page, web: Web) -> None:
    """Busy or not (every request saves the session), so roles removed at
    Keycloak are gone here within KMQ_OIDC_SESSION_S."""
    sign_in(page, web, "dave")
    first = _session_expiry(page)
    signed_in_at = time.time()
    assert signed_in_at + 3500 < first < signed_in_at + 3700
    wait_for(lambda: time.time() > signed_in_at + 2, 5, "two seconds on")
    page.goto("/queues/")
    assert _session_expiry(page) == pytest.approx(first, abs=1)


def _session_expiry(page: Page) -> float:
    [cookie] = [c for c in page.context.cookies() if c["name"] == "sessionid"]
    return cookie["expires"]


def test_logging_out_ends_the_keycloak_session_too(page: Page, web: Web) -> None:
    """Else "Sign in with Keycloak" would let the same person, or anyone at
    a shared machine, straight back in without a password."""
    sign_in(page, web, "dave")
    page.get_by_role("button", name="Log out dave").click()
    page.wait_for_url(f"{web.url}/accounts/login/")
    page.get_by_role("button", name="Sign in with Keycloak").click()
    page.locator("#username").wait_for(state="visible", timeout=15_000)
    assert "/realms/kmq/" in page.url


def test_passwords_are_for_admins_only_here(page: Page, web: Web) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill("root")
    page.get_by_label("Password").fill(ADMIN_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{web.url}/")
    assert page.get_by_role("button", name="Log out root").is_visible()


# --- the API's bearer tokens -------------------------------------------------


def api(web: Web, token: str) -> requests.Response:
    return requests.get(
        f"{web.url}/api/v1/queues/", headers={"Authorization": f"Bearer {token}"}, timeout=10
    )


def test_an_access_token_of_the_issuer_is_taken_with_the_role_its_groups_give(
    web: Web, keycloak: KeycloakServer
) -> None:
    answer = api(web, keycloak.token("alice", "alice-password"))
    assert answer.status_code == 200, answer.text
    assert web.role_of("alice") == "OPERATOR"


def test_a_token_whose_groups_give_no_role_is_403(web: Web, keycloak: KeycloakServer) -> None:
    answer = api(web, keycloak.token("bob", "bob-password"))
    assert answer.status_code == 403, answer.text
    assert "none of the groups" in answer.json()["detail"]


def test_an_expired_token_is_401(web: Web, keycloak: KeycloakServer) -> None:
    token = keycloak.token(
        "alice", "alice-password", client_id="short-lived", secret="short-lived-secret"
    )
    expires = _claims(token)["exp"]
    wait_for(lambda: time.time() > expires + 1, 10, "the token's expiry")
    answer = api(web, token)
    assert answer.status_code == 401 and "expired" in answer.json()["detail"], answer.text


def test_a_token_of_another_issuer_is_401(web: Web, keycloak: KeycloakServer) -> None:
    token = keycloak.token("alice", "alice-password", realm="elsewhere")
    answer = api(web, token)
    assert answer.status_code == 401, answer.text
    assert keycloak.issuer("elsewhere") in answer.json()["detail"]


def test_a_token_signed_with_other_keys_under_our_issuer_is_401(
    web: Web, keycloak: KeycloakServer
) -> None:
    """The other realm's token, its payload claiming our issuer: the header
    and signature are the other realm's, so no key of ours verifies it."""
    header, payload, signature = keycloak.token("alice", "alice-password", realm="elsewhere").split(
        "."
    )
    claims = {**_claims_of(payload), "iss": keycloak.issuer(), "aud": "kmqadmin"}
    forged = ".".join([header, _b64(json.dumps(claims).encode()), signature])
    answer = api(web, forged)
    assert answer.status_code == 401, answer.text
    assert "did not verify" in answer.json()["detail"]


def test_a_token_of_ours_with_its_claims_changed_is_401(web: Web, keycloak: KeycloakServer) -> None:
    """Our realm's key id, so the key is found: only the signature check
    can refuse it."""
    header, payload, signature = keycloak.token("dave", "dave-password").split(".")
    claims = {**_claims_of(payload), "groups": ["kmq-admins"]}
    forged = ".".join([header, _b64(json.dumps(claims).encode()), signature])
    answer = api(web, forged)
    assert answer.status_code == 401, answer.text
    assert "Signature verification failed" in answer.json()["detail"]


def test_an_id_token_is_not_an_access_token(web: Web, keycloak: KeycloakServer) -> None:
    token = keycloak.token("alice", "alice-password", kind="id_token")
    assert _claims(token)["aud"] == "kmqadmin"  # the audience check alone would take it
    answer = api(web, token)
    assert answer.status_code == 401 and "ID token" in answer.json()["detail"], answer.text


@pytest.mark.parametrize("token", ["not-a-jwt", "a.b.c", "x y"])
def test_garbage_is_401_never_500(web: Web, token: str) -> None:
    answer = api(web, token)
    assert answer.status_code == 401, answer.text


def _claims(token: str) -> dict:
    return _claims_of(token.split(".")[1])


def _claims_of(segment: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def test_doctor_reads_the_issuers_discovery_and_keys(web: Web, keycloak: KeycloakServer) -> None:
    answer = manage("kmq", "doctor", **web.settings)
    [line] = [line for line in answer.stdout.splitlines() if " sso " in line]
    assert line.startswith("  ok") and keycloak.issuer() in line and "signing keys" in line, line
