"""Prometheus exposition shared by the web process and the workers.

Framework-free on purpose: the web side (console/metrics/) and the worker
side (workers/metrics*.py) both build their registry here, so the
multiprocess rule is written once. The names exported are listed in
docs/metrics.md.
"""
