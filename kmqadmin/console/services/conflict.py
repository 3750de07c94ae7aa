"""What an action names is there but is not what the request says it is: one
exception for every service, so the API answers it with a 409 and the console
with a flash, and nothing is done."""


class Conflict(Exception):
    """The request's view of the target disagrees with Kafka's (a copy whose
    kmq-id names another message, an id of another queue...)."""
