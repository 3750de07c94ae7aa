"""A cluster's security settings, the masking of secrets, and the check that they let us in."""
