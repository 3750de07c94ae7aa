"""Shared Kafka plumbing: client configs, topic helpers, the embedded broker.

Both cores (kmq/, scheduler/) and the Django apps build their clients here so
timeouts and defaults are decided once.
"""
