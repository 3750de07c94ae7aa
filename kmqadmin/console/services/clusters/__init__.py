"""The registered clusters: their clients, whether they are reachable, their topics' kinds."""
