"""The audit trail and how a change is shown as a diff."""
