"""A queue as the console shows it: messages, in-flight pages, dead letters and their stats."""
