"""The REST API's endpoints, one module per resource."""
