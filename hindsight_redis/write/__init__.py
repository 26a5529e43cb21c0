"""The write path: an accepted write reaches the namespace's stream at once.

``writer`` (append behind the backlog gate, idempotency, waiting for the
outcome), ``backlog`` (how far the workers are behind), ``session_tails``
(``write_many``'s context from the previous items of a session).
"""
