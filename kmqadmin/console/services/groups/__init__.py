"""Consumer groups and share groups: listing them and resetting their offsets."""
