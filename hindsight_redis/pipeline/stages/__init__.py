"""The stages a worker runs on each batch, in order: filter, score, summarize, embed, dedup.

``base`` (the ``Stage`` protocol and the ``Candidate`` each stage reads and
marks), ``rules`` and ``filter_config`` (layer 1), ``scoring`` (layer 2,
the write score), ``summarize`` (layer 3), ``filters`` (the three layers
assembled), ``embed``, ``dedup`` (merge near-duplicates, flag
contradictions).
"""
