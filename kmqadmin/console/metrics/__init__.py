"""The web process's metrics: requests, WebSockets and the queues' gauges.

Served at ``/metrics`` (views/metrics.py); the names are listed in
docs/metrics.md.
"""
