"""The Celery application: hosts the tracker/scheduler services and bulk jobs."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kmqadmin.settings")

app = Celery("kmqadmin")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["kmqadmin.console.services"], related_name="jobs")
app.autodiscover_tasks(["kmqadmin.sqs"], related_name="moving")
# By name: it imports Django models, loadable only once the worker has set
# Django up, which is before it builds its steps.
app.steps["worker"].add("kmqadmin.workers.bootsteps:HostServices")
