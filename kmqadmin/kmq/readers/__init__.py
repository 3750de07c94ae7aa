"""Read-only views of a queue for the console and the API: in flight, dead letters, lifecycles,
gauges.
"""
