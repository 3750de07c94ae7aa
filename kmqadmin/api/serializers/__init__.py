"""Request and response shapes, one module per resource. The OpenAPI schema
is generated from these and every view builds its answer with one, so what
is documented is what is sent."""
