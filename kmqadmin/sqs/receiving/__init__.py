"""Receiving from a queue: the receivers that hold consumers, receipt handles, settling messages."""
