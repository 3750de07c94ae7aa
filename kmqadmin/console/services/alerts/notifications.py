"""Telling a rule's receivers that its alert started or ended.

A webhook gets a JSON body (or Slack's ``{"text": …}``) by POST, signed
when the rule has a secret: ``X-Kmq-Signature: sha256=<hex>``, the
HMAC-SHA256 of the body's bytes, as GitHub signs its webhooks. Only a 2xx
is told: a redirect is not followed (it would turn the POST into a GET). A
429, a 5xx or a connection that fails is tried again (urllib3's Retry: at
once, then after 1 s and 2 s); each try waits CONNECT_S to connect and
READ_S for the answer. A webhook URL holds its secret as often as not
(Slack's do): errors and logs name only its scheme and host.
Emails go through Django's email backend (EMAIL_URL). What failed is said,
never raised: a receiver that is down must not stop the other rules'
checks."""

import hashlib
import hmac
import json
from dataclasses import dataclass
from urllib.parse import urlsplit

import requests
from django.conf import settings
from django.core.mail import send_mail
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from kmqadmin.console.models import AlertEvent, AlertRule
from kmqadmin.console.services import secrets_at_rest
from kmqadmin.console.services.roles import Role

RETRIES = 3
BACKOFF_S = 0.5
CONNECT_S, READ_S = 3.0, 5.0
SIGNATURE_HEADER = "X-Kmq-Signature"


@dataclass(frozen=True)
class Delivery:
    attempts: int
    error: str = ""
    webhook_sent: bool = False
    email_sent: bool = False


def tell(rule: AlertRule, event: AlertEvent) -> Delivery:
    """Every receiver of ``rule`` the event has not reached yet (one told
    before a failure elsewhere is not told twice); attempts are the
    webhook's tries."""
    attempts, errors = 0, []
    webhook_sent, email_sent = event.webhook_sent, event.email_sent
    if rule.webhook_url and not webhook_sent:
        attempts, error = _post(rule, event)
        errors += [f"webhook: {error}"] if error else []
        webhook_sent = not error
    if rule.recipients() and not email_sent:
        error = _email(rule, event)
        errors += [f"email: {error}"] if error else []
        email_sent = not error
    return Delivery(attempts, "; ".join(errors), webhook_sent, email_sent)


def summary(rule: AlertRule, event: AlertEvent) -> str:
    state = "FIRING" if event.kind == AlertEvent.Kind.FIRING else "resolved"
    return (
        f"[{state}] {rule.get_condition_display()} on {rule.target}: "
        f"{event.value:g} (threshold {event.threshold})"
    )


def body(rule: AlertRule, event: AlertEvent) -> bytes:
    if rule.slack:
        return json.dumps({"text": summary(rule, event)}).encode()
    return json.dumps(
        {
            "alert": event.kind,
            "rule": rule.pk,
            "target": rule.target,
            "target_kind": rule.target_kind,
            "condition": rule.condition,
            "value": event.value,
            "threshold": event.threshold,
            "at": event.at.isoformat(),
            "summary": summary(rule, event),
        }
    ).encode()


def signature(secret: str, payload: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), payload, hashlib.sha256).hexdigest()


def seen_by(url: str, role: Role | None) -> str:
    """A webhook URL as someone of ``role`` may see it: whole to admins."""
    return url if role is not None and role >= Role.ADMIN else shown_url(url)


def shown_url(url: str) -> str:
    """Scheme and host only: the rest of a webhook URL may be its secret."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}/…" if parts.scheme else "…"


def _post(rule: AlertRule, event: AlertEvent) -> tuple[int, str]:
    payload, where = body(rule, event), shown_url(rule.webhook_url)
    headers = {"Content-Type": "application/json", "User-Agent": "kmqadmin-alerts"}
    if rule.webhook_secret:
        secret = secrets_at_rest.decrypt(rule.webhook_secret)
        if secret is None:
            return 0, "its secret cannot be decrypted with KMQ_SQS_ENCRYPTION_KEY; set it again"
        headers[SIGNATURE_HEADER] = signature(secret, payload)
    with requests.Session() as session:
        session.mount("http://", HTTPAdapter(max_retries=_retry()))
        session.mount("https://", HTTPAdapter(max_retries=_retry()))
        try:
            answer = session.post(
                rule.webhook_url,
                data=payload,
                headers=headers,
                timeout=(CONNECT_S, READ_S),
                allow_redirects=False,
            )
        except (requests.ConnectionError, requests.Timeout) as exc:
            return RETRIES + 1, f"{where} could not be reached: {_reason(exc)}"
        except requests.RequestException as exc:  # a URL requests cannot use
            return 1, f"{where} cannot be called: {type(exc).__name__}"
    attempts = len(answer.raw.retries.history) + 1 if answer.raw.retries else 1
    if 200 <= answer.status_code < 300:
        return attempts, ""
    return attempts, f"{where} answered {answer.status_code} {answer.reason}"


def _retry() -> Retry:
    return Retry(
        total=RETRIES,
        backoff_factor=BACKOFF_S,
        status_forcelist=[429, *range(500, 600)],
        allowed_methods={"POST"},
        raise_on_status=False,
        respect_retry_after_header=False,
    )


def _reason(exc: requests.RequestException) -> str:
    """The innermost cause: requests wraps urllib3's MaxRetryError, whose
    text repeats the whole URL; the cause names only the host."""
    cause = getattr(exc.args[0], "reason", None) if exc.args else None
    return str(cause) if cause is not None else type(exc).__name__


def _email(rule: AlertRule, event: AlertEvent) -> str:
    if not getattr(settings, "MAILERS", None):
        return "no mailer is configured; set EMAIL_URL"
    try:
        send_mail(_subject(rule, event), summary(rule, event), None, rule.recipients())
    except Exception as exc:  # any backend's failure: SMTP, DNS, refused recipient
        return f"{type(exc).__name__}: {exc}"
    return ""


def _subject(rule: AlertRule, event: AlertEvent) -> str:
    return f"{settings.EMAIL_SUBJECT_PREFIX}{summary(rule, event)}"
