"""The RediSearch index of a namespace: its schema, its record, its filters, its counts.

``manager`` (create, check, rebuild behind an alias, reindex), ``schema``
(the index as data), ``record`` (which index is live, with which models),
``fields`` (fields added to older indexes), ``filters`` (filter
expressions: who may see what), ``counts`` (memories by status), ``gc``
(the search module's GC, kept frequent), ``claims`` (content claims written
before they expired given an expiry: a stored-data upgrade step).
"""
