"""The SQS endpoint in a real web process (as `make run` serves it),
driven by boto3 over TCP in both SQS protocols: its keys made with
`kmq sqs-key`, its queues the console's, its signatures verified, its roles
applied, and Django still serving everything else."""

import pytest

from kmqadmin.sqs.auth.remembered import REMEMBER_S
from tests.process import manage, wait_for
from tests.sqs.clients import PROTOCOLS, Web, error_of, sqs, status


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_list_queues_names_the_consoles_queues_at_urls_pointing_back_here(
    web: Web, protocol: str
) -> None:
    client = sqs(web, protocol=protocol)
    assert client.list_queues(QueueNamePrefix="orders")["QueueUrls"] == [
        f"{web.base}/orders-a",
        f"{web.base}/orders-b",
    ]
    assert client.list_queues(QueueNamePrefix="pay")["QueueUrls"] == [f"{web.base}/payments"]
    assert "QueueUrls" not in client.list_queues(QueueNamePrefix="none")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_at_the_root_as_kombu_posts_it_is_the_same_endpoint(web: Web, protocol: str) -> None:
    urls = sqs(web, protocol=protocol, path="").list_queues(QueueNamePrefix="orders")
    assert urls["QueueUrls"][0] == f"{web.base}/orders-a"


def test_a_wrong_secret_an_unknown_key_or_a_missing_role_is_refused(web: Web) -> None:
    assert error_of(sqs(web, secret="x" * 40).list_queues) == ("SignatureDoesNotMatch", 403)
    assert error_of(sqs(web, user="stranger").list_queues) == ("AccessDenied", 403)
    stranger = web.keys["stranger"]
    revoked = manage("kmq", "sqs-key", "revoke", stranger["AWS_ACCESS_KEY_ID"], **web.settings)
    assert revoked.returncode == 0, revoked.stderr
    # Revoked in another process: the web process remembers keys for REMEMBER_S.
    refused = ("InvalidClientTokenId", 403)
    wait_for(
        lambda: error_of(sqs(web, user="stranger").list_queues) == refused,
        timeout=REMEMBER_S + 5,
        what="the revoked key refused",
    )


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_action_not_built_yet_is_an_sqs_error_never_a_500(web: Web, protocol: str) -> None:
    client = sqs(web, "worker", protocol)
    code, http = error_of(
        lambda: client.add_permission(
            QueueUrl=f"{web.base}/orders-a", Label="l", AWSAccountIds=["1"], Actions=["SendMessage"]
        )
    )
    assert (code, http) == ("AWS.SimpleQueueService.UnsupportedOperation", 400)


def test_everything_else_is_still_djangos(web: Web) -> None:
    assert status(f"http://127.0.0.1:{web.port}/healthz") == 200
