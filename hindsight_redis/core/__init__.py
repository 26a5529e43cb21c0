"""Pure data and rules, no I/O: what every other room builds on.

``models`` (events, records, receipts, hits, filters), ``requests`` (what a
write and a search take, defined and validated once, with ``checks``),
``keys`` (every key name from one prefix), ``fields`` (a memory's field
names), ``documents`` (the memory hash), ``codec`` (stream events and
outcomes), ``context`` (what is kept of a write's context), ``vectors``
(vectors as stored bytes), ``resp`` (reading Redis replies), ``text``
(writing systems).
"""
