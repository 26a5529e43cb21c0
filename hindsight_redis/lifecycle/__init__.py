"""What happens to a memory after it is stored: read, forgotten, exported, reviewed.

``access`` (hit counts, folded by workers), ``retention`` (the pure
retention score), ``forgetting`` (forget one memory, sweep a namespace),
``cold`` and ``coldfile`` (export, purge, import, and the file format),
``review`` and ``conflicts`` (conflict review: resolutions as data, and
resolving or undoing them).
"""
