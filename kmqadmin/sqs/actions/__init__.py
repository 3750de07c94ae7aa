"""One module per group of SQS actions, and the catalog that routes an action name to them."""
