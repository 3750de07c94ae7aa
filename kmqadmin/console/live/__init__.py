"""The console's live views over WebSockets (Channels): the routes
(routing), the queue and dashboard views (consumers) with the one render per
tick their sockets share (feed), and the topic browser's live tail (tail).

They read through the console's services and models, like the views do.
"""
