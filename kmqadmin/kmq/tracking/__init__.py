"""The redelivery tracker: reads start/end markers, keeps each partition's open messages,
redelivers the overdue.
"""
