"""What an action is on is not there: one exception for every service, so the
API answers it with a 404 and the console with a flash, whatever the action."""


class Missing(LookupError):
    """Not (or no longer) there: not in flight, compacted, no such letter..."""
