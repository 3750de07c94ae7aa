"""The console's forms, one module per page or concept they serve: the registry
(registry: clusters, queues, schedules topics), the queue page (queue: an
action on a delivery, a replay), schedules (schedule), the audit log's filter
(audit), the topic browser (browse), producing a message (produce), a group's
offset reset (reset) and an alert rule (alerts).

Forms parse what a person typed; what it does is the services' (console/
services/), which the forms may import, with the models and the cores. A
form the API parses with too (the DLQ's filter) is the services', below.
"""
