"""Celery side: bootsteps hosting the long-running services, and bulk-job tasks."""
