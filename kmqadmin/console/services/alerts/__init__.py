"""Alerts: rules on a queue or schedules topic, checked every minute by beat
from the sources the dashboard reads (measures.py), told once when they
start and once when they end (evaluation.py) to a webhook or by email
(notifications.py)."""
