"""REST API for other services (DRF, OpenAPI schema at /api/v1/schema/; versions.py)."""
