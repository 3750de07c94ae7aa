"""PySpark jobs computing message-lifecycle analytics."""
