"""The topic browser: reading records, queries over them, renderings and masking."""
