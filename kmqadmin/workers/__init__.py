"""Celery worker side: the bootstep hosting the long-running trackers and
schedulers. The bulk-job tasks live with the services they extend
(console/services/jobs.py); workers read the models and run the cores."""
