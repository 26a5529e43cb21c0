"""What may be stored, what is held, what is erased, and the record of it all.

``audit`` (the per-namespace audit trail: who did what to which memories,
ids and digests only); ``secrets`` (the secrets and personal data a write may
not carry, found by ``formats`` and ``prose``, masked by placeholders) and
``edge`` (what the write edge does with them under the ``secrets`` setting:
mask, drop, hold, keep); the writes that try to instruct future readers (held
for review), and the erasure that removes every copy of a memory, with a
receipt.
"""
