"""The web console: queue configuration, live views and operator actions."""
