"""Who is calling: SigV4 signatures and the callers they name."""
