"""Views over records: the topic browser, producing a record, search."""
