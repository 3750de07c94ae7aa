"""REST API for other services (DRF, OpenAPI schema at /api/schema/)."""
