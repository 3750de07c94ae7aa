"""The console's service layer: what a person or a service can ask of kmqadmin.

The REST API, the console's views and Channels consumers, and the Celery
jobs all act and read through these modules, so an action means the same
thing (the same Kafka record, the same audit entry) whichever way it was
asked for. Nothing here renders HTML or speaks HTTP: the API imports only
this package and the models, never the console's view-side modules.

- ``clients``: the Kafka clients this process keeps per queue or topic
- ``messages``: enqueue, and ack / retry / extend / reject by kmq-id
- ``letters``: a DLQ letter as shown, and redriving one
- ``letter_filters``: which letters, from query parameters
- ``schedules``: a schedule as shown, write / cancel / fire one
- ``queue_stats``: a queue's gauges and rates
- ``in_flight_pages``: pages of in-flight deliveries with their record fields
- ``jobs``: the Celery tasks for bulk work (redrive, replay, purge, analytics)
- ``audit``, ``roles``, ``missing``: the audit trail, who may act, "not there"
"""
