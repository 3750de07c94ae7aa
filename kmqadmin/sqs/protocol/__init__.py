"""SQS wire protocols (JSON and query), their parameters, errors and digests."""
