"""Schedules a newcomer can find: a menu entry and a list of the schedules
topics, a registration form that reads as one, and a 404 that links to it."""

import pytest

from kmqadmin.console.models import Cluster, ScheduleTopic
from tests.console.conftest import client_as

pytestmark = pytest.mark.django_db


@pytest.fixture
def reminders() -> ScheduleTopic:
    cluster = Cluster.objects.create(name="local", bootstrap_servers="127.0.0.1:1")
    return ScheduleTopic.objects.create(
        cluster=cluster, topic="reminders", group_id="reminders-s", allowed_targets=["emails"]
    )


def test_the_menu_leads_to_every_schedules_topic(reminders: ScheduleTopic) -> None:
    viewer = client_as("viewer")
    dashboard = viewer.get("/").content.decode()
    assert '<a href="/schedules/">Schedules</a>' in dashboard
    listed = viewer.get("/schedules/").content.decode()
    assert 'href="/schedules/reminders/?cluster=local"' in listed
    assert "emails" in listed and "reminders-s" in listed
    assert "Register a schedules topic" not in listed  # an admin's button
    assert "Register a schedules topic" in client_as("admin").get("/schedules/").content.decode()


def test_the_form_is_a_schedules_topic_s_with_the_only_cluster_chosen(
    reminders: ScheduleTopic,
) -> None:
    admin = client_as("admin")
    form = admin.get("/registry/schedules/new?topic=invoices")
    page = form.content.decode()
    assert "<h1>Register a schedules topic</h1>" in page
    initial = form.context["form"].initial
    assert (initial["topic"], initial["cluster"]) == ("invoices", reminders.cluster.pk)
    Cluster.objects.create(name="other", bootstrap_servers="127.0.0.1:2")
    two = admin.get("/registry/schedules/new").context["form"].initial
    assert "cluster" not in two  # two clusters: the admin chooses


def test_an_unknown_schedules_topic_is_our_404_with_a_link_to_register_it() -> None:
    answer = client_as("viewer").get("/schedules/invoices/")
    assert answer.status_code == 404
    page = answer.content.decode()
    assert "no schedule topic invoices registered" in page
    assert 'href="/registry/schedules/new?topic=invoices"' in page
    assert "<h1>Not found</h1>" in page and 'href="/"' in page


def test_a_page_that_does_not_exist_is_our_404_without_the_resolver_s_details() -> None:
    answer = client_as("viewer").get("/no/such/page")
    assert answer.status_code == 404
    assert "No page at this address." in answer.content.decode()
    assert "data-register" not in answer.content.decode()
