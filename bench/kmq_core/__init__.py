"""The queue core benchmark's parts (bench/kmq_throughput.py runs them): the
queues each run fills, the tracker's load of open deliveries, and how
close to its deadline a dropped ack's message comes back."""
